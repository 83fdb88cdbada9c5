"""The one remote probe doctor runs on every node (stdlib only; sent to `python -` on stdin).

It gathers every per-node fact in one process so doctor costs one ssh round per node, whatever the
number of checks: versions, paths, GPUs, /dev/shm, disk, clock, name resolution, the route to the
master, JIT-cache locks. It also runs the cross-node rendezvous tests concurrently, bounded by
`wait_s`:
  * shared directory: the master writes <shared>/.dscluster/doctor/<token>.master; every other node
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

# `subprocess` and `shutil` are not imported at start: a probe is mostly interpreter start-up, and
# on a simulated cluster 32 of them share two cores. Only nvidia-smi and `pdsh -V` need subprocess.

MARKER = "DSCLUSTER-PROBE "
PACKAGES = ("torch", "deepspeed", "dscluster", "mpi4py", "ninja",
            "nvidia-nccl-cu12", "nvidia-nccl-cu13", "nvidia-nccl-cu11")
COMPILERS = ("ninja", "cc1plus", "nvcc", "c++", "g++", "cicc", "ptxas")
ENV_KEYS = ("TORCH_CUDA_ARCH_LIST", "TORCH_EXTENSIONS_DIR", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME",
            "CUDA_VISIBLE_DEVICES", "PATH")


def _safe(fn, *a):
    try:
        return fn(*a)
    except Exception as err:  # noqa: BLE001 - a probe reports, it never crashes
        return {"error": "%s: %s" % (type(err).__name__, err)}


def which(name):
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(folder or ".", name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def python_facts(p):
    # Not platform.python_version(): importing `platform` compiles a dozen regexes (~10 ms CPU).
    return {"executable": sys.executable, "realpath": os.path.realpath(sys.executable),
            "version": "%d.%d.%d" % sys.version_info[:3], "expected": p["expected_python"],
            "expected_exists": os.access(p["expected_python"], os.X_OK)}


def search_path():
    """sys.path as a normal start would have it. The probe runs with `python -S` (site's start-up
    work, .pth hooks included, costs ~25 ms of CPU per node, and 32 simulated nodes share two cores),
    so add the site-packages directories and the plain-directory lines of their .pth files here."""
    if "site" in sys.modules and not sys.flags.no_site:
        return list(sys.path)
    import site
    paths = list(sys.path)
    if hasattr(site, "venv"):
        site.venv(set())  # a venv's pyvenv.cfg moves sys.prefix (normally done by site's start-up)
    sitedirs = site.getsitepackages()
    if site.ENABLE_USER_SITE is not False and os.path.isdir(site.getusersitepackages()):
        sitedirs.append(site.getusersitepackages())
    for d in sitedirs:
        if not os.path.isdir(d) or d in paths:
            continue
        paths.append(d)
        for name in sorted(os.listdir(d)):
            if name.endswith(".pth"):
                try:
                    with open(os.path.join(d, name)) as fh:
                        for line in fh:
                            line = line.strip()
                            if line and not line.startswith(("#", "import")):
                                full = os.path.join(d, line)
                                if os.path.isdir(full) and full not in paths:
                                    paths.append(full)
                except OSError:
                    pass
    return paths


def package_versions(paths):
    """Installed versions from the *.dist-info folder names on the path (first hit wins, as with
    importlib.metadata, which costs ~0.1 s of imports and METADATA parsing per node; this ~1 ms)."""
    wanted = {_norm(n): n for n in PACKAGES}
    out = dict.fromkeys(PACKAGES)
    for entry in paths:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for folder in names:
            if not folder.endswith((".dist-info", ".egg-info")):
                continue
            stem = folder.rsplit(".", 1)[0]
            name, _, version = stem.partition("-")
            key = wanted.get(_norm(name))
            if key and out[key] is None and version:
                out[key] = version
    return out


def _norm(name):
    return name.lower().replace("-", "_").replace(".", "_")


def torch_build(paths):
    """torch.version.cuda without importing torch: read torch/version.py."""
    path = next((os.path.join(d, "torch", "version.py") for d in paths
                 if os.path.isfile(os.path.join(d, "torch", "version.py"))), None)
    if path is None:
        return None
    facts = {}
    with open(path) as fh:
        for line in fh:
            for key in ("cuda", "hip", "__version__"):
                if line.startswith(key + ":") or line.startswith(key + " ="):
                    value = line.split("=", 1)[1].strip().strip("'\"")
                    facts[key.strip("_")] = None if value in ("None", "") else value
    return facts


def gpu_facts():
    exe = which("nvidia-smi")
    if not exe:
        return {"count": 0, "smi": False}
    import subprocess
    try:
        out = subprocess.run([exe, "--query-gpu=name,memory.total,driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=10)
    except subprocess.TimeoutExpired:
        return {"count": 0, "smi": True, "error": "nvidia-smi timed out after 10 s"}
    if out.returncode != 0:
        return {"count": 0, "smi": True, "error": (out.stderr or out.stdout).strip()[-300:]}
    gpus = [[c.strip() for c in line.split(",")] for line in out.stdout.strip().splitlines() if line.strip()]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    count = len(gpus)
    if visible is not None:
        count = min(count, len([v for v in visible.split(",") if v.strip() and v.strip() != "-1"]))
    return {"count": count, "smi": True, "names": [g[0] for g in gpus],
            "driver": gpus[0][2] if gpus and len(gpus[0]) > 2 else None, "visible": visible}


def cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


def statvfs_bytes(path):
    st = os.statvfs(path)
    return {"total": st.f_frsize * st.f_blocks, "free": st.f_frsize * st.f_bavail}


def resolve_all(p):
    out = {}
    for host in {h for n in p["nodes"] for h in (n["address"], n["name"])}:
        try:
            infos = socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_STREAM)
            out[host] = sorted({i[4][0] for i in infos})
        except socket.gaierror as err:
            out[host] = {"error": str(err)}
    host = socket.gethostname()
    try:
        own = sorted({i[4][0] for i in socket.getaddrinfo(host, None, socket.AF_INET)})
    except socket.gaierror as err:
        own = {"error": str(err)}
    return {"map": out, "hostname": host, "hostname_ips": own}


def interface_addresses():
    """{ipv4: interface name} via SIOCGIFADDR, without needing iproute2 on the node."""
    import fcntl
    import struct
    result = {}
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        for _, name in socket.if_nameindex():
            try:
                raw = fcntl.ioctl(sock.fileno(), 0x8915, struct.pack("256s", name[:15].encode()))
                result[socket.inet_ntoa(raw[20:24])] = name
            except OSError:
                pass
    finally:
        sock.close()
    return result


def route_to_master(p):
    addrs = interface_addresses()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.connect((p["master_address"], p["master_port"] or 9))
        src = sock.getsockname()[0]
    finally:
        sock.close()
    iface = addrs.get(src) or ("lo" if src.startswith("127.") else None)
    return {"source_ip": src, "iface": iface, "interfaces": sorted(set(addrs.values()))}


def tools(p):
    out = {name: which(name) for name in ("pdsh", "mpirun", "srun", "ssh", "ninja")}
    if out["pdsh"] and p["is_master"]:
        import subprocess
        try:
            res = subprocess.run([out["pdsh"], "-V"], capture_output=True, text=True, timeout=5)
            out["pdsh_modules"] = (res.stdout + res.stderr).strip()[-300:]
        except subprocess.TimeoutExpired:
            out["pdsh_modules"] = "timeout"
    return out


def extension_locks():
    """`lock` files in the torch JIT cache (left behind when a compile is killed) + live compilers."""
    roots = []
    if os.environ.get("TORCH_EXTENSIONS_DIR"):
        roots.append(os.environ["TORCH_EXTENSIONS_DIR"])
    roots.append(os.path.join(os.path.expanduser("~"), ".cache", "torch_extensions"))
    locks, now = [], time.time()
    for root in roots:
        if not os.path.isdir(root):
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            if dirpath[len(root):].count(os.sep) >= 2:
                dirnames[:] = []  # <root>/<pyXY_cpu>/<op>/lock: no need to walk build trees
            if "lock" in filenames:
                path = os.path.join(dirpath, "lock")
                try:
                    locks.append({"path": path, "age_s": round(now - os.stat(path).st_mtime, 1)})
                except OSError:
                    pass
    compilers = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/comm" % pid) as fh:
                    comm = fh.read().strip()
            except OSError:
                continue
            if comm in COMPILERS:
                compilers.append("%s(%s)" % (comm, pid))
    return {"roots": roots, "locks": locks, "compilers": compilers}


def deepspeed_env_file():
    """KEY=VAL lines of ~/.deepspeed_env: DeepSpeed exports them to every rank."""
    path = os.path.join(os.path.expanduser("~"), ".deepspeed_env")
    if not os.path.isfile(path):
        return {}
    out = {}
    with open(path) as fh:
        for line in fh:
            if "=" in line:
                key, value = line.rstrip("\n").split("=", 1)
                out[key.strip()] = value
    return {"path": path, "vars": out}


def mount_of(path):
    best = ("", "?", "?")
    try:
        with open("/proc/self/mountinfo") as fh:
            for line in fh:
                parts = line.split()
                mnt = parts[4]
                fstype = parts[parts.index("-") + 1]
                source = parts[parts.index("-") + 2]
                if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best[0]):
                    best = (mnt, fstype, source)
    except (OSError, ValueError, IndexError):
        pass
    return {"mountpoint": best[0], "fstype": best[1], "source": best[2]}


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
    facts["cpus"] = cpu_count()
    facts["shm"] = _safe(statvfs_bytes, "/dev/shm")
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
