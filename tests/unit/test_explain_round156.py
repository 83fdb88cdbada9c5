"""Round 156's rule (issue 45), from threads of torchrun / torch elastic launches failing at the rendezvous store: the
store's port below 1024, which only root may bind (torch's c10d socket.cpp, SocketListenOp: `The server socket has
failed to bind to [::]:520 (errno: 13 - Permission denied).`), read as store-port-privileged; second wordings (other
versions' and callers' words than the corpus cases it was written from) and near misses, other components' text with
like words that must not be read as it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("store-port-privileged",)


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("text", [
    # torch 2.2's warnings from socket.cpp before accelerate's static rendezvous raised (KimMeen/Time-LLM#20, port 97)
    ("[W socket.cpp:426] [c10d] The server socket has failed to bind to [::]:97 (errno: 13 - Permission denied).\n"
     "[W socket.cpp:426] [c10d] The server socket has failed to bind to 0.0.0.0:97 (errno: 13 - Permission denied).\n"
     "[E socket.cpp:462] [c10d] The server socket has failed to listen on any local network address.\n"),
    # the joined message of torch.distributed.DistNetworkError, a later torch (KimMeen/Time-LLM#158, port 98)
    ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. The "
     "server socket has failed to bind to [::]:98 (errno: 13 - Permission denied). The server socket has failed to "
     "bind to 0.0.0.0:98 (errno: 13 - Permission denied).\n"),
    # the RuntimeError of an older torch, raised through TCPStore in static_tcp_rendezvous (Time-LLM#20's traceback)
    ('  File "/home/user/.venvs/timellm3.9/lib/python3.9/site-packages/torch/distributed/elastic/rendezvous/'
     'static_tcp_rendezvous.py", line 55, in next_rendezvous\n'
     "    self._store = TCPStore(  # type: ignore[call-arg]\n"
     "RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed "
     "to bind to [::]:97 (errno: 13 - Permission denied). The server socket has failed to bind to 0.0.0.0:97 (errno: "
     "13 - Permission denied).\n"),
])
def test_store_port_below_1024(text):
    assert sig(text) == "store-port-privileged"


@pytest.mark.parametrize("text", [
    # a port below 1024 that another server holds (errno 98; open-mmlab/mmpretrain#960 launched on port 22, sshd's)
    ("[W socket.cpp:401] [c10d] The server socket has failed to bind to [::]:22 (errno: 98 - Address already in use).\n"
     "[W socket.cpp:401] [c10d] The server socket has failed to bind to 0.0.0.0:22 (errno: 98 - Address already in "
     "use).\n"
     "[E socket.cpp:435] [c10d] The server socket has failed to listen on any local network address.\n"),
    # the default port taken by another run (huggingface/accelerate#3245)
    ("RuntimeError: The server socket has failed to listen on any local network address. \n"
     "The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use). \n"
     "The server socket has failed to bind to ?UNKNOWN? (errno: 98 - Address already in use).\n"),
    # another program's server refused a port below 1024 (Python's SocketServer, LevyHsu/CF-Cannon#6): not torch's store
    ('  File "/usr/lib/python2.7/SocketServer.py", line 434, in server_bind\n'
     "    self.socket.bind(self.server_address)\n"
     '  File "/usr/lib/python2.7/socket.py", line 228, in meth\n'
     "    return getattr(self._sock,name)(*args)\n"
     "socket.error: [Errno 13] Permission denied\n"),
])
def test_near_misses_are_not_store_port_privileged(text):
    assert sig(text) != "store-port-privileged"
