"""Failure signatures of the rendezvous and the default process group set up by hand, from round 201 of issue 45 (live:
broken users' scripts run for real on torch 2.13 and DeepSpeed 0.19.8): init_process_group given a timeout that is
not a timedelta, a world size of 0, a tcp:// URL without its port or without rank, a hand-built store without rank
and world size, a CUDA device_id on a machine without one, a TCPStore built by hand as master on more than one rank
or counting more clients than the job has, the default group used after destroy_process_group, and a file://
rendezvous through a file an earlier run left behind. Each pattern is the wording of the component that prints it
(torch/distributed/distributed_c10d.py, rendezvous.py, the TCPStore's C++ server, Gloo's connectFullMesh) and, where
a message is not the mistake's own, the frames and the process group's own excepthook prefix around it, never one
log's. sigrounds.py places this table just before the exception messages' (sigmessages.py), so these are read
before the general address-in-use, store-ranks-missing and pg-not-initialized answers."""

from __future__ import annotations

from dscluster.sigtypes import Signature
from dscluster.sigtypes import sig as _sig

# A frame of the script's own code (not torch.distributed's: its rendezvous.py builds the store of env:// and tcp://
# itself, with `return TCPStore(`), whose source line constructs a TCPStore, then Python's caret line(s).
_OWN_TCPSTORE = (r"File \"(?![^\"\n]{0,400}torch[/\\]distributed[/\\])[^\"\n]{1,400}\", line \d+, in [\w<>.]{1,100}\n"
                 r"(?:\[rank\d+\]: )?[^\n]{0,300}\bTCPStore\([^\n]{0,500}\n"
                 r"(?:(?:\[rank\d+\]: )?[ \t]{0,300}[~^][~^ \t]{0,500}\n)?"
                 r"(?:\[rank\d+\]: )?")

RDZV_SIGNATURES: tuple[Signature, ...] = (
    # distributed_c10d.py's _check_valid_timeout (init_process_group, new_group): "Expected timeout argument to be of
    # type datetime.timedelta, got {timeout}".
    _sig("pg-timeout-not-timedelta", r"Expected timeout argument to be of type datetime\.timedelta, got [^\n]{0,60}",
         "A process group's timeout was given as a plain number (seconds, or milliseconds), while torch.distributed "
         "takes a datetime.timedelta for it (init_process_group, new_group, deepspeed.init_distributed's timeout).",
         "Pass a timedelta: `from datetime import timedelta` and timeout=timedelta(seconds=20) (or minutes=30). A "
         "restart fails the same way.", retry=False),
    # torch's TCPStore binding (torch/csrc/distributed/c10d/init.cpp): "TCPStore world size cannot be 0", reached
    # from init_process_group's env:// and tcp:// rendezvous (rendezvous.py _create_c10d_store) or a store built by
    # hand, when world_size is 0.
    _sig("pg-world-size-zero", r"TCPStore world size cannot be 0",
         "The rendezvous store was given a world size of 0: init_process_group (or a TCPStore built by hand) got "
         "world_size=0, most often rank and world_size in each other's places (rank 0's rank taken for the world "
         "size: a setup(rank, world_size) helper called as setup(world_size, rank)), or a count that is 0 on this "
         "node (torch.cuda.device_count() on a machine without GPUs, an unset variable read with a default of 0).",
         "Pass them by keyword from the launcher's variables: init_process_group(backend, "
         "rank=int(os.environ[\"RANK\"]), world_size=int(os.environ[\"WORLD_SIZE\"])), or pass neither (env:// reads "
         "RANK and WORLD_SIZE itself); check the order of a helper's arguments at its call. A restart fails the same "
         "way.", retry=False),
    # rendezvous.py's tcp:// and file:// handlers: "Error initializing torch.distributed using tcp:// rendezvous: rank
    # parameter missing" ("world size parameter missing"): neither init_process_group's rank/world_size nor the URL's
    # ?rank=&world_size= query gave it; unlike env://, these never read RANK and WORLD_SIZE.
    _sig("init-method-no-rank", r"Error initializing torch\.distributed using (?:tcp|file):// rendezvous: "
         r"(?:rank|world size) parameter missing",
         "init_process_group was given a tcp:// or file:// init_method without the rank or the world size (the "
         "message says which): unlike env://, those rendezvous do not read RANK and WORLD_SIZE from the environment, "
         "so both must be passed to init_process_group (or put in the URL's query, ?rank=R&world_size=N).",
         "Pass both: init_process_group(backend, init_method=..., rank=int(os.environ[\"RANK\"]), "
         "world_size=int(os.environ[\"WORLD_SIZE\"])), or under a launcher use init_method=\"env://\" (the default), "
         "which reads them and MASTER_ADDR/MASTER_PORT itself. A restart fails the same way.", retry=False),
    _sig("init-method-no-port", r"Error initializing torch\.distributed using tcp:// rendezvous: port number missing",
         "The tcp:// init_method names a host but no port (tcp://HOST instead of tcp://HOST:PORT): rank 0's "
         "rendezvous store needs the port to listen on, and the other ranks the port to reach it.",
         "Give the port: init_method=\"tcp://\" + os.environ[\"MASTER_ADDR\"] + \":\" + os.environ[\"MASTER_PORT\"] "
         "(the one the launcher chose, the same on every rank), or under a launcher leave init_method out (env:// "
         "reads MASTER_ADDR and MASTER_PORT). A restart fails the same way.", retry=False),
    # rendezvous.py's file:// handler: "... using file:// rendezvous: path missing" (urlparse's path empty: the name
    # of file://NAME is the URL's host part, so a relative path is lost).
    _sig("init-method-file-no-path", r"Error initializing torch\.distributed using file:// rendezvous: path missing",
         "The file:// init_method has no path: it was written with a path relative to the working directory "
         "(file://dist_init, as one would give open()), which a URL reads as a host name and an empty path; file:// "
         "takes an absolute path after the two slashes (file:///shared/dist_init, three slashes in all).",
         "Give an absolute path on a file system every rank sees, fresh for each run: init_method=\"file://\" + "
         "os.path.abspath(\"dist_init\") on one node, or a path on the shared file system across nodes (delete a "
         "file an earlier run left there before launching); or under a launcher use env:// (the default). A restart "
         "fails the same way.", retry=False),
    # distributed_c10d.py's init_process_group with store=: "world_size must be positive if using store" / "rank must
    # be non-negative if using store" (AssertionErrors; only env:// and tcp:// read them elsewhere).
    _sig("pg-store-no-rank-world", r"(?:world_size must be positive|rank must be non-negative) if using store",
         "init_process_group was given a store built by hand (store=) without rank and world_size (or with negative "
         "ones): with a store, torch reads neither from the environment, as it does for env://.",
         "Pass both with the store: init_process_group(backend, store=store, rank=int(os.environ[\"RANK\"]), "
         "world_size=int(os.environ[\"WORLD_SIZE\"])), or drop the store and let env:// build it. A restart fails the "
         "same way.", retry=False),
    # distributed_c10d.py's init_process_group, device_id checks (torch 2.6+): "device_id is an int, but no
    # accelerator support is found from the current compilation." and "device_id {d} does not match the current
    # compilation's accelerator support: {acc}." (torch's CPU build: None).
    _sig("pg-device-id-no-accelerator", r"device_id (?:is an int, but no accelerator support is found|\S+ does not "
         r"match the current compilation's accelerator support)",
         "init_process_group was given device_id (a GPU, to bind the process group to it, as for NCCL) on a torch "
         "that has no support for that device: a CPU-only build (or another accelerator's), so there is no such "
         "device to bind the group to.",
         "Pass device_id only where the GPU exists: device_id=torch.device(\"cuda\", local_rank) if "
         "torch.cuda.is_available() else None (gloo on CPU takes none); or install torch's CUDA build on GPU nodes. "
         "A restart fails the same way.", retry=False),
    # The TCPStore's server, as the script builds it itself (_OWN_TCPSTORE: its own frame constructing TCPStore
    # right above), failing to listen: "The server socket has failed to listen on any local network address. port:
    # N, ..., code: -98, name: EADDRINUSE". Every rank given is_master=True (or a second store on a port the job's
    # own store holds). The general address-in-use (signatures.py) answers where torch built the store.
    _sig("tcpstore-master-every-rank",
         _OWN_TCPSTORE + r"(?P<ev>[^\n]{0,300}?(?:EADDRINUSE|Address already in use)[^\n]{0,300})",
         "A TCPStore the script builds itself could not listen on its port, which was already taken: most often "
         "is_master=True was given on more than one rank (only one process, rank 0, may host the store; the others "
         "connect to it as clients), so the second one to start finds the port held by the first. Else the script "
         "builds a second store on a port a store of the same job already holds (init_process_group's own on "
         "MASTER_PORT), or another program holds that port.",
         "Give is_master=(rank == 0) and the same host and port on every rank (TCPStore(MASTER_ADDR, MASTER_PORT, "
         "world_size, rank == 0, timeout=...)); for a store of the script's own beside the process group's, use "
         "another port than the group's (not MASTER_PORT), or pass the one store to init_process_group(store=...). "
         "A restart fails the same way.", retry=False),
    # The TCPStore's server, as the script builds it itself, waiting for its clients: TCPStore.cpp's "Timed out
    # after {} seconds waiting for clients. {}/{} clients joined." (the general store-ranks-missing answers where
    # torch built the store from the launcher's world size).
    _sig("store-world-size-hand-built", _OWN_TCPSTORE + r"(?P<ev>[^\n]{0,300}?Timed out after \d+ seconds waiting for "
         r"clients\. \d+/\d+ clients joined\.?)",
         "A TCPStore the script builds itself waited for more clients than connected to it (the message counts "
         "them): its world_size counts every process that will connect, the master's own included, so it must be "
         "the job's world size; a world_size + 1 (the master counted once more), a hard-coded count or another "
         "job's makes it wait until its timeout. Else a rank never started or could not reach the store.",
         "Build it with the launcher's world size: TCPStore(MASTER_ADDR, MASTER_PORT, int(os.environ"
         "[\"WORLD_SIZE\"]), rank == 0, timeout=...), or pass wait_for_workers=False; if the count is right, read "
         "the missing ranks' logs for an error before they reached the store. A restart fails the same way.",
         retry=False),
    # The default group used after destroy_process_group(): _get_default_group's "Default process group has not been
    # initialized" printed through the excepthook that init_process_group installs (distributed_c10d.py:
    # `excepthook_prefix = f"[rank{get_rank()}]"`, every line "[rankN]: ..."), which destroy_process_group leaves in
    # place: only a process whose group once existed prints it so. Never initialized: pg-not-initialized.
    _sig("pg-used-after-destroy", r"(?:^|[\]:] )\[rank\d+\]: (?P<ev>(?:\w+\.)*ValueError: Default process group "
         r"has not been initialized[^\n]{0,80})",
         "torch.distributed was used after the default process group was destroyed: this process had initialized it "
         "(its traceback carries the \"[rankN]:\" prefix init_process_group installs), and destroy_process_group() "
         "ran before a later collective, barrier or get_rank (a cleanup() at the end of a train function, or a "
         "teardown in a finally or a callback, followed by evaluation or saving that still uses the group).",
         "Destroy the process group once, at the very end of the script, after the last collective (move "
         "cleanup()/destroy_process_group() out of the training function, after evaluation and saving); where a new "
         "group is really meant, call init_process_group again after destroying it. A restart fails the same way.",
         retry=False),
)
# Read in the error's lines as the log has them (explain._as_logged: the block and five lines after): their evidence
# is the prefix torch put there.
READS_AS_LOGGED = frozenset({"pg-used-after-destroy"})
