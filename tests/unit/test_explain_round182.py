"""Round 182's rules (issue 45, live round: settings of the distributed stack set wrong in the user's script or shell):
gloo's `rank < size` (a WORLD_SIZE or rank set by hand), torch.distributed's unknown backend name, DeepSpeed's
DS_ACCELERATOR naming an accelerator this machine lacks, a server at MASTER_ADDR:MASTER_PORT that is not torch's store
(TCPStore's ping), a tcp:// init_method naming a host that does not resolve, and an invalid TORCH_DISTRIBUTED_DEBUG.
Second wordings (other versions' and callers' words than the live cases they were written from) and near misses, other
components' text with like words that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("rank-not-below-world-size", "dist-backend-unknown", "ds-accelerator-unavailable", "store-port-foreign-server",
       "init-method-host-unresolved", "dist-debug-level-invalid")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("text", [
    # an older torch's gloo (the line number of context.cc before gloo moved it), torchrun's world of 2, rank 2
    ("RuntimeError: [enforce fail at /pytorch/third_party/gloo/gloo/context.cc:27] rank < size. 2 vs 2\n"),
    # a Windows build's path
    ("RuntimeError: [enforce fail at C:\\actions-runner\\_work\\pytorch\\pytorch\\third_party\\gloo\\gloo\\context.cc:"
     "27] rank < size. 3 vs 2\n"),
])
def test_rank_not_below_world_size(text):
    assert sig(text) == "rank-not-below-world-size"


@pytest.mark.parametrize("text", [
    # torch's new_group given a rank past the world (distributed_c10d.py), not gloo's context
    "ValueError: Rank 4 is out of range. Valid ranks are 0 to 3 for this process group.\n",
    # gloo's other enforcement in the same file: a size below one
    "RuntimeError: [enforce fail at ../third_party/gloo/gloo/context.cc:21] size >= 1. 0 vs 1\n",
])
def test_near_misses_are_not_rank_not_below_world_size(text):
    assert sig(text) != "rank-not-below-world-size"


@pytest.mark.parametrize("text", [
    # torch 2.1's assertion for a vendor backend whose package was not imported before init_process_group
    ('  File "/usr/local/lib/python3.9/site-packages/torch/distributed/distributed_c10d.py", line 1277, in '
     "_new_process_group_helper\n"
     "    assert backend_str.upper() in Backend._plugins, (\n"
     "AssertionError: Unknown c10d backend type HCCL\n"),
    # torch 1.x's Backend constructor
    ('  File "/opt/conda/lib/python3.7/site-packages/torch/distributed/distributed_c10d.py", line 83, in __new__\n'
     "    raise ValueError(\"Invalid backend: '{}'\".format(name))\n"
     "ValueError: Invalid backend: 'ncll'\n"),
    # torch 2.13's device map for a backend name with no device
    "ValueError: Unknown backend 'glo'. Specify a 'device:backend' string or use one of: ['gloo', 'nccl', 'xccl']\n",
])
def test_dist_backend_unknown(text):
    assert sig(text) == "dist-backend-unknown"


@pytest.mark.parametrize("text", [
    # another program's "Invalid backend" (a solver front end), with no torch frame
    "ValueError: Invalid backend: 'cvc4'. Available backends are: 'z3', 'cvc5'\n",
    # an application's own backend registry
    "ValueError: Unknown backend type: 'redis'. Available backends: memory, sqlite\n",
])
def test_near_misses_are_not_dist_backend_unknown(text):
    assert sig(text) != "dist-backend-unknown"


@pytest.mark.parametrize("text", [
    # the unsupported-name branch of real_accelerator.py
    ("ValueError: DS_ACCELERATOR must be one of ['cuda', 'cpu', 'xpu', 'xpu.external', 'npu', 'mps', 'hpu', 'mlu', "
     "'sdaa']. Value \"gpu\" is not supported\n"),
    # an older DeepSpeed's XPU branch (intel_extension_for_pytorch)
    "ValueError: XPU_Accelerator requires intel_extension_for_pytorch, which is not installed on this system.\n",
    # the current XPU branch
    ("ValueError: XPU_Accelerator requires PyTorch with XPU support: XPU_Accelerator requires PyTorch with XPU "
     "support (torch.xpu).\n"),
    # Habana's
    "ValueError: HPU_Accelerator requires habana_frameworks.torch.hpu, which is not installed on this system.\n",
])
def test_ds_accelerator_unavailable(text):
    assert sig(text) != "module-not-found" and sig(text) == "ds-accelerator-unavailable"


@pytest.mark.parametrize("text", [
    # DeepSpeed's automatic detection falling back to the CPU: a warning, not the failure
    ("[WARNING] [real_accelerator.py:213:get_accelerator] Setting accelerator to CPU. If you have GPU or other "
     "accelerator, we were unable to detect it.\n"),
    # torch_npu itself missing where the script imports it (no DS_ACCELERATOR)
    "ModuleNotFoundError: No module named 'torch_npu'\n",
])
def test_near_misses_are_not_ds_accelerator_unavailable(text):
    assert sig(text) != "ds-accelerator-unavailable"


@pytest.mark.parametrize("text", [
    # an earlier torch's warning format, an inference server's HTTP port taken for the store's
    ("[W TCPStore.cpp:384] TCP client failed to connect/validate to host 127.0.0.1:20237 - retrying: Ping failed, "
     "invalid value returned from server. Expected: 3058192, Got: 759714643\n"),
    ("torch.distributed.DistNetworkError: Ping failed, invalid value returned from server. Expected: 4021, Got: "
     "1347703880\n"),
])
def test_store_port_foreign_server(text):
    assert sig(text) == "store-port-foreign-server"


@pytest.mark.parametrize("text", [
    # the store's client timing out with nobody answering: not a foreign server
    ("[E socket.cpp:1028] [c10d] The client socket has timed out after 20000ms while trying to connect to "
     "(10.10.0.1, 29500).\n"),
    # a monitoring script's own words
    "ERROR Invalid Value returned from server\n",
])
def test_near_misses_are_not_store_port_foreign_server(text):
    assert sig(text) != "store-port-foreign-server"


_TCP_FRAMES = ('  File "/usr/lib/python3/dist-packages/torch/distributed/rendezvous.py", line 176, in '
               "_tcp_rendezvous_handler\n"
               "    store = _create_c10d_store(result.hostname, result.port, rank, world_size, timeout, use_libuv)\n")


def test_init_method_host_unresolved_second_wording():
    # an IPv4-only lookup of a host with a dash in its name, torch 2.3's frame text
    text = ("[W socket.cpp:697] [c10d] The IPv4 network addresses of (gpu-head-01, 23456) cannot be retrieved (gai "
            "error: -2 - Name or service not known).\nTraceback (most recent call last):\n" + _TCP_FRAMES +
            "torch.distributed.DistNetworkError: The client socket has timed out after 1800s while trying to connect "
            "to (gpu-head-01, 23456).\n")
    assert sig(text) == "init-method-host-unresolved"


@pytest.mark.parametrize("text", [
    # the same lookup through env:// (MASTER_ADDR from a launcher or a job operator): master-unreachable's
    ("[W socket.cpp:697] [c10d] The IPv6 network addresses of (job-master-0, 23456) cannot be retrieved (gai error: "
     "-2 - Name or service not known).\n"
     '  File "/usr/lib/python3/dist-packages/torch/distributed/rendezvous.py", line 265, in _env_rendezvous_handler\n'
     "    store = _create_c10d_store(master_addr, master_port, rank, world_size, timeout, use_libuv)\n"),
    # the tcp:// rendezvous while DNS is not answering yet (EAI_AGAIN): a restart may get through
    ("[W socket.cpp:697] [c10d] The IPv4 network addresses of (node001, 23456) cannot be retrieved (gai error: -3 - "
     "Temporary failure in name resolution).\n" + _TCP_FRAMES),
])
def test_near_misses_are_not_init_method_host_unresolved(text):
    assert sig(text) != "init-method-host-unresolved"


def test_dist_debug_level_invalid_second_wording():
    # an older torch's RuntimeError, raised from the C++ debug level parser
    text = ("RuntimeError: The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL.\n"
            "Exception raised from setDebugLevelFromEnvironment at ../torch/csrc/distributed/c10d/debug.cpp:46\n")
    assert sig(text) == "dist-debug-level-invalid"


@pytest.mark.parametrize("text", [
    # DDP's hint that names the variable: not an invalid value
    ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. ... In "
     "addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to print out "
     "information about which particular parameters did not receive gradient on this rank as part of this error\n"),
    # another flag's own refusal
    "ValueError: The value of NCCL_DEBUG must be one of VERSION, WARN, INFO, TRACE\n",
])
def test_near_misses_are_not_dist_debug_level_invalid(text):
    assert sig(text) != "dist-debug-level-invalid"
