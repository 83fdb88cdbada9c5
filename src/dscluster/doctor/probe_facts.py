"""Per-node facts for doctor's probe (stdlib only): versions, paths, GPUs, /dev/shm, names, the
route to the master, launcher tools, JIT-cache locks. Each function looks at this node only.

Sent to the node as the first half of the probe program (probe.probe_source() joins it with
probe_script.py), so it imports nothing from dscluster. Nothing here imports torch or deepspeed:
on a simulated cluster 32 nodes share two cores, and the probe is mostly interpreter start-up.
`subprocess` is imported only where it is needed (nvidia-smi, `pdsh -V`).
"""

import os
import socket
import sys
import time

PACKAGES = ("torch", "deepspeed", "dscluster", "mpi4py", "ninja",
            "nvidia-nccl-cu12", "nvidia-nccl-cu13", "nvidia-nccl-cu11")
COMPILERS = ("ninja", "cc1plus", "nvcc", "c++", "g++", "cicc", "ptxas")
ENV_KEYS = ("TORCH_CUDA_ARCH_LIST", "TORCH_EXTENSIONS_DIR", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME",
            "CUDA_VISIBLE_DEVICES", "PATH", "NCCL_IB_DISABLE", "NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_NET")


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


def _read(path):
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return None


def rdma_facts(sys_root="/sys/class/infiniband", dev_root="/dev/infiniband"):
    """InfiniBand/RoCE devices the kernel has (sysfs) and whether this container can open them
    (/dev/infiniband/uverbs*): NCCL's IB transport needs both."""
    devices = []
    try:
        names = sorted(os.listdir(sys_root))
    except OSError:
        names = []
    for name in names:
        ports = []
        try:
            port_ids = sorted(os.listdir(os.path.join(sys_root, name, "ports")))
        except OSError:
            port_ids = []
        for port in port_ids:
            base = os.path.join(sys_root, name, "ports", port)
            ports.append({"port": port, "state": _read(os.path.join(base, "state")),
                          "link_layer": _read(os.path.join(base, "link_layer")),
                          "rate": _read(os.path.join(base, "rate"))})
        devices.append({"name": name, "ports": ports})
    try:
        uverbs = sorted(e for e in os.listdir(dev_root) if e.startswith("uverbs"))
        dev = True
    except OSError:
        uverbs, dev = [], False
    return {"devices": devices, "dev_infiniband": dev, "uverbs": uverbs}


def cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


def statvfs_bytes(path):
    st = os.statvfs(path)
    return {"total": st.f_frsize * st.f_blocks, "free": st.f_frsize * st.f_bavail}


def shm_facts(path="/dev/shm"):
    """Size and free space, plus the DeepSpeed CPU all-reduce buffers left there: DeepSpeed never
    unlinks them (about 70 MB of RAM each), so runs outside dscluster's watchdog pile them up."""
    out = statvfs_bytes(path)
    count, size = 0, 0
    for name in os.listdir(path):
        if name.startswith("deepspeed_allreduce_buffer_"):
            try:
                size += os.stat(os.path.join(path, name)).st_size
                count += 1
            except OSError:
                pass
    out["ds_buffers"], out["ds_buffer_bytes"] = count, size
    return out


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
    names = ("ssh", "ninja") + tuple(p.get("tools") or ())  # + the launcher backend's node_tools
    out = {name: which(name) for name in names}
    if out.get("pdsh") and p["is_master"]:
        import subprocess
        try:
            res = subprocess.run([out["pdsh"], "-V"], capture_output=True, text=True, timeout=5)
            out["pdsh_modules"] = (res.stdout + res.stderr).strip()[-300:]
        except subprocess.TimeoutExpired:
            out["pdsh_modules"] = "timeout"
    return out


def extension_locks():
    """`lock` files in the torch JIT cache (left behind when a compile is killed) + live compilers.

    The cache is where torch's extension builder puts it: `TORCH_EXTENSIONS_DIR` when set (then
    the default directory is not used, and a lock there cannot block a build), else
    `~/.cache/torch_extensions`."""
    roots = [os.environ.get("TORCH_EXTENSIONS_DIR")
             or os.path.join(os.path.expanduser("~"), ".cache", "torch_extensions")]
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
