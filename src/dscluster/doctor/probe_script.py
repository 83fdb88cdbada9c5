"""The one remote probe doctor runs on every node (stdlib only; sent to `python -S -` on stdin,
after probe_facts.py: probe.probe_source() joins the two halves into one program).

It gathers every per-node fact in one process so doctor costs one ssh round per node, whatever the
number of checks: versions, paths, GPUs, /dev/shm, disk, clock, name resolution, the route to the
master, JIT-cache locks (probe_facts.py). This half runs the cross-node rendezvous tests,
concurrently with the facts and bounded by `wait_s`:
  * shared directory: the master writes <shared>/.dscluster-doctor/<token>.master; every other node
    waits to read it, then writes its own ack; the master waits for every ack, then removes them.
    A node whose "shared" directory is really a private one never sees the master's file.
  * master port: the master binds and listens on it (EADDRINUSE = busy); every node (the master
    too) connects to master_address:port and must read the token back.
  * the master connects to every node's sshd port and reads the SSH banner (what pdsh needs).
Output: one line `DSCLUSTER-PROBE <json>` on stdout (login shells may print other lines).
Do not import torch or deepspeed here: 32 nodes importing torch on shared cores takes many seconds.
"""

import json
import os
import socket
import sys
import threading
import time

if "python_facts" not in globals():  # run as a file (tests, profiling): the facts half is beside it
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from probe_facts import *  # noqa: F401,F403
    from probe_facts import _safe  # noqa: F401

MARKER = "DSCLUSTER-PROBE "


def shared_rendezvous(p, out):
    shared = p["shared_dir"]
    out["path"] = shared
    out["exists"] = os.path.isdir(shared)
    if not out["exists"]:
        return
    out.update(mount_of(os.path.realpath(shared)))
    out["space"] = _safe(statvfs_bytes, shared)
    # Not <shared>/.dscluster: that one holds the cluster's public key and host keys and is owned by
    # root on purpose; the node user (who runs this probe, and the ranks) must not write there.
    folder = os.path.join(shared, ".dscluster-doctor")
    token, deadline = p["token"], time.time() + p["wait_s"]
    mine = os.path.join(folder, "%s.%s" % (token, "master" if p["is_master"] else p["node"]))
    try:
        os.makedirs(folder, exist_ok=True)
        _cleanup_old(folder)
    except OSError as err:
        out["writable"] = False
        out["write_error"] = str(err)
        return
    if p["is_master"]:
        out["writable"] = _write(mine, token, out)
        acks = set()
        while time.time() < deadline and len(acks) < len(p["peers"]):
            for peer in p["peers"]:
                if os.path.exists(os.path.join(folder, "%s.%s" % (token, peer))):
                    acks.add(peer)
            time.sleep(0.05)
        out["acks"] = sorted(acks)
        for name in list(p["peers"]) + ["master"]:
            try:
                os.unlink(os.path.join(folder, "%s.%s" % (token, name)))
            except OSError:
                pass
        return
    master_file = os.path.join(folder, "%s.master" % token)
    while time.time() < deadline:
        try:
            with open(master_file) as fh:
                out["master_nonce"] = fh.read().strip() == token
            break
        except OSError:
            time.sleep(0.05)
    else:
        out["master_nonce"] = False
    if out["master_nonce"]:
        out["writable"] = _write(mine, token, out)
    else:
        probe = os.path.join(folder, ".write-test-%s-%s" % (p["node"], os.getpid()))
        out["writable"] = _write(probe, token, out)
        try:
            os.unlink(probe)
        except OSError:
            pass


def _write(path, text, out):
    try:
        with open(path + ".tmp", "w") as fh:
            fh.write(text)
        os.replace(path + ".tmp", path)
        return True
    except OSError as err:
        out["write_error"] = str(err)
        return False


def _cleanup_old(folder):
    now = time.time()
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        try:
            if now - os.stat(path).st_mtime > 600:
                os.unlink(path)
        except OSError:
            pass


def port_listen(p, out):
    """Master: is master_port free? Then serve the token to whoever connects until all peers did."""
    port = p["master_port"]
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as TCPStore does: TIME_WAIT is not busy
    try:
        srv.bind(("0.0.0.0", port))
        srv.listen(128)
    except OSError as err:
        out["free"] = False
        out["error"] = str(err)
        out["owner"] = _port_owner(port)
        srv.close()
        return
    out["free"] = True
    expected = set(p["peers"]) | {p["node"]}
    seen = set()
    srv.settimeout(0.2)
    deadline = time.time() + p["wait_s"] + 1.0
    while time.time() < deadline and not expected <= seen:
        try:
            conn, _ = srv.accept()
        except socket.timeout:
            continue
        try:
            conn.settimeout(1.0)
            name = conn.recv(256).decode(errors="replace").strip()
            conn.sendall((p["token"] + "\n").encode())
            seen.add(name)
        except OSError:
            pass
        finally:
            conn.close()
    srv.close()
    out["connected"] = sorted(seen)


def _port_owner(port):
    """Best effort: which process listens on the port (only our own processes are visible)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as fh:
                next(fh)
                for line in fh:
                    cols = line.split()
                    if int(cols[1].rsplit(":", 1)[1], 16) == port and cols[3] == "0A":
                        inodes.add(cols[9])
        except (OSError, StopIteration, ValueError, IndexError):
            pass
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            for fd in os.listdir("/proc/%s/fd" % pid):
                link = os.readlink("/proc/%s/fd/%s" % (pid, fd))
                if link.startswith("socket:[") and link[8:-1] in inodes:
                    with open("/proc/%s/cmdline" % pid, "rb") as fh:
                        cmd = fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
                    return {"pid": int(pid), "cmdline": cmd[:200]}
        except OSError:
            continue
    return None


def port_connect(p, out):
    """Every node: reach master_address:master_port and read the token back."""
    deadline = time.time() + p["wait_s"]
    last = "not tried"
    while time.time() < deadline:
        try:
            conn = socket.create_connection((p["master_address"], p["master_port"]), timeout=2.0)
        except ConnectionRefusedError:
            last = "refused"
            time.sleep(0.1)  # the master's listener may not be up yet
            continue
        except socket.timeout:
            last = "timeout"
            continue
        except OSError as err:
            last = "error: %s" % err
            time.sleep(0.2)
            continue
        try:
            conn.settimeout(1.5)
            conn.sendall((p["node"] + "\n").encode())
            got = conn.recv(256).decode(errors="replace").strip()
            out["result"] = "ok" if got == p["token"] else "foreign"
        except OSError:
            out["result"] = "foreign"
        finally:
            conn.close()
        return
    out["result"] = last


def ssh_banners(p, out):
    """Master only: can the master open every node's sshd port (pdsh runs from here)?"""
    def one(node):
        try:
            conn = socket.create_connection((node["address"], node["ssh_port"]), timeout=3.0)
        except ConnectionRefusedError:
            out[node["name"]] = "refused"
            return
        except socket.timeout:
            out[node["name"]] = "timeout"
            return
        except OSError as err:
            out[node["name"]] = "error: %s" % err
            return
        try:
            conn.settimeout(3.0)
            banner = conn.recv(256).decode(errors="replace").strip()
            out[node["name"]] = "ok" if banner.startswith("SSH-") else "not ssh: %r" % banner[:60]
        except OSError as err:
            out[node["name"]] = "no banner: %s" % err
        finally:
            conn.close()
    threads = [threading.Thread(target=one, args=(n,), daemon=True) for n in p["nodes"]]
    for t in threads:
        t.start()
    for t in threads:
        t.join(8.0)


def main(argv):
    start = time.time()
    p = json.loads(argv[1])
    facts = {"time_start": start, "node": p["node"]}
    shared, port_srv, port_cli, banners = {}, {}, {}, {}
    workers = [threading.Thread(target=_guard, args=(shared_rendezvous, p, shared), daemon=True),
               threading.Thread(target=_guard, args=(port_connect, p, port_cli), daemon=True)]
    if p["is_master"]:
        workers.append(threading.Thread(target=_guard, args=(port_listen, p, port_srv), daemon=True))
        workers.append(threading.Thread(target=_guard, args=(ssh_banners, p, banners), daemon=True))
    for t in workers:
        t.start()
    facts["python"] = _safe(python_facts, p)
    paths = search_path()
    facts["packages"] = _safe(package_versions, paths)
    facts["torch_build"] = _safe(torch_build, paths)
    facts["gpu"] = _safe(gpu_facts)
    facts["rdma"] = _safe(rdma_facts)
    facts["cpus"] = cpu_count()
    facts["shm"] = _safe(shm_facts, "/dev/shm")
    facts["resolve"] = _safe(resolve_all, p)
    facts["route"] = _safe(route_to_master, p)
    facts["tools"] = _safe(tools, p)
    facts["jit"] = _safe(extension_locks)
    facts["env"] = {k: os.environ.get(k) for k in ENV_KEYS}
    facts["deepspeed_env"] = _safe(deepspeed_env_file)
    facts["user"] = _safe(lambda: __import__("pwd").getpwuid(os.getuid()).pw_name)
    facts["time_facts"] = time.time()
    for t in workers:
        t.join(p["wait_s"] + 10.0)
    facts.update(shared=shared, port_server=port_srv, port_client=port_cli, ssh_banners=banners)
    facts["time_end"] = time.time()
    sys.stdout.write(MARKER + json.dumps(facts) + "\n")
    sys.stdout.flush()
    return 0


def _guard(fn, p, out):
    try:
        fn(p, out)
    except Exception as err:  # noqa: BLE001
        out["error"] = "%s: %s" % (type(err).__name__, err)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
