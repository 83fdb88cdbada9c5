"""Round 155's rule (issue 45), from threads of Hugging Face Trainer/accelerate multi-GPU and multi-node failures: torch's
rendezvous-endpoint check (torch/distributed/elastic/rendezvous/utils.py parse_rendezvous_endpoint) rejecting an endpoint
whose port is the text None, an unset value accelerate launch formatted into it (utils/launch.py,
f"{main_process_ip}:{main_process_port}"), read as accelerate-endpoint-unset; second wordings, in another caller's words
than the corpus case it was written from, and near misses that must not be read as it."""

import pytest
from explain_rounds import sig


@pytest.mark.parametrize("text", [
    # accelerate 0.24's DeepSpeed path (prepare_deepspeed_cmd_env sets the same f-string), address given, port not
    ("  File \"/usr/local/lib/python3.10/dist-packages/accelerate/commands/launch.py\", line 967, in launch_command\n"
     "    deepspeed_launcher(args)\n"
     "  File \"/usr/local/lib/python3.10/dist-packages/accelerate/commands/launch.py\", line 680, in deepspeed_launcher\n"
     "    distrib_run.run(args)\n"
     "  File \"/usr/local/lib/python3.10/dist-packages/torch/distributed/elastic/rendezvous/utils.py\", line 103, in "
     "parse_rendezvous_endpoint\n"
     "    raise ValueError(\n"
     "ValueError: The port number of the rendezvous endpoint '10.0.3.7:None' must be an integer between 0 and 65536.\n"),
    # neither address nor port, the message alone as torch raises it (no trailing period in a log cut short)
    "ValueError: The port number of the rendezvous endpoint 'None:None' must be an integer between 0 and 65536",
])
def test_rendezvous_endpoint_with_an_unset_port(text):
    assert sig(text) == "accelerate-endpoint-unset"


@pytest.mark.parametrize("text", [
    # the same check given a port out of range (torchtitan's harness note: a --master_port above 65535)
    "ValueError: The port number of the rendezvous endpoint 'localhost:70000' must be an integer between 0 and 65536.",
    # an empty port (torch's own test endpoints, 'dummy.com:'; an unset shell variable in HOST:$PORT)
    "ValueError: The port number of the rendezvous endpoint 'dummy.com:' must be an integer between 0 and 65536.",
    # other programs' port checks with the same last words
    "ValueError: Port must be an integer between 0 and 65536",
    # torch's c10d socket warning with a host that is no address (accelerate#2245: a path where the host belongs)
    ("9.91.4.251: [W socket.cpp:601] [c10d] The IPv6 network addresses of (/root/cuda11.8.bashrc, 45458) cannot be "
     "retrieved (gai error: -3 - Temporary failure in name resolution).\n"),
])
def test_near_misses_are_not_accelerate_endpoint_unset(text):
    assert sig(text) != "accelerate-endpoint-unset"
