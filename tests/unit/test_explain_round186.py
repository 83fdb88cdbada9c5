"""Round 186's rules (issue 45, live): torch.distributed's object collectives and torch.multiprocessing's tensor sharing,
in the words of the components that print them: distributed_c10d.py's object collectives writing into an output list
too short (all_gather_object / gather_object / broadcast_object_list's `object_list[i] = _tensor_to_object(...)` under
CPython's IndexError; scatter_object_list's own check) as object-collective-output-list; pickle refusing an object in
_object_to_tensor's `_pickler(f).dump(obj)` as object-collective-unpicklable; gather's and scatter's root-only lists
(_validate_output_list_for_rank and scatter's own checks) as gather-scatter-list-rank; reductions.py's
rebuild_storage_fd asking a producer that has exited for a queued tensor's descriptor as mp-queue-producer-exited.
Second wordings (other versions' and callers' words than the live cases') and near misses, other components' text
with like words that must not be read as them."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("object-collective-output-list", "object-collective-unpicklable", "gather-scatter-list-rank",
       "mp-queue-producer-exited")


def test_new_families_are_translated_and_final():
    translated_and_final(NEW)


@pytest.mark.parametrize("text", [
    # torch 1.10's all_gather_object (no group argument to _tensor_to_object), a list sized for another group
    ('  File "/usr/local/lib/python3.8/dist-packages/torch/distributed/distributed_c10d.py", line 1700, in '
     "all_gather_object\n"
     "    object_list[i] = _tensor_to_object(tensor, tensor_size)\n"
     "IndexError: list assignment index out of range\n"),
    # torch 2.4's broadcast_object_list off src, with 3.11's carets under the line
    ('[rank3]:   File "/opt/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 2901, in '
     "broadcast_object_list\n"
     "[rank3]:     object_list[i] = _tensor_to_object(obj_view, obj_size, group)\n"
     "[rank3]:     ~~~~~~~~~~~^^^\n"
     "[rank3]: IndexError: list assignment index out of range\n"),
    # scatter_object_list's own check, as torch 1.9 raised it
    ("ValueError: Expected argument scatter_object_output_list to be a list of size at least 1.\n"),
])
def test_object_collective_output_list(text):
    assert sig(text) == "object-collective-output-list"


@pytest.mark.parametrize("text", [
    # the user's own index past a list the collective filled (not under the collective's line)
    ('  File "/home/user/eval.py", line 40, in merge\n'
     "    results[rank + 1] = gathered[rank]\n"
     "IndexError: list assignment index out of range\n"),
    # all_gather's tensor list of the wrong length: gloo's own check (all-gather-list-length's)
    ("RuntimeError: ProcessGroupGloo::allgather: invalid output tensor list at index 0 (expected length 2, got 1)\n"),
    # DeepSpeed's own IndexError in its ZeRO partitioning, not an object collective
    ('  File "/usr/lib/python3/site-packages/deepspeed/runtime/zero/stage_1_and_2.py", line 621, in '
     "initialize_optimizer_states\n"
     "    self.single_partition_of_fp32_groups[i].grad = single_grad_partition\n"
     "IndexError: list index out of range\n"),
])
def test_near_misses_are_not_object_collective_output_list(text):
    assert sig(text) != "object-collective-output-list"


@pytest.mark.parametrize("text", [
    # torch 2.0's all_gather_object of a Lightning metric holding a local function (PicklingError form)
    ('  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2053, in '
     "_object_to_tensor\n"
     "    _pickler(f).dump(obj)\n"
     "_pickle.PicklingError: Can't pickle <function <lambda> at 0x7f3a2c1d5e50>: attribute lookup <lambda> on "
     "__main__ failed\n"),
    # a dataset object with an open file, through a custom __reduce__ frame below the dump
    ('  File "/usr/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2350, in _object_to_tensor\n'
     "    _pickler(f).dump(obj)\n"
     '  File "/home/user/data.py", line 12, in __getstate__\n'
     "    return dict(self.__dict__)\n"
     "TypeError: cannot pickle '_io.BufferedReader' object\n"),
])
def test_object_collective_unpicklable(text):
    assert sig(text) == "object-collective-unpicklable"


@pytest.mark.parametrize("text", [
    # the same refusal under torch.save's _save (torch-save-unpicklable's)
    ('  File "/usr/lib/python3.10/site-packages/torch/serialization.py", line 853, in _save\n'
     "    pickler.dump(obj)\n"
     "AttributeError: Can't pickle local object 'build.<locals>.Head'\n"),
    # an object collective's unpickling on the receiving rank (a module missing there), not pickling
    ('  File "/usr/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2070, in _tensor_to_object\n'
     "    return _unpickler(io.BytesIO(buf)).load()\n"
     "ModuleNotFoundError: No module named 'mymetrics'\n"),
])
def test_near_misses_are_not_object_collective_unpicklable(text):
    assert sig(text) != "object-collective-unpicklable"


@pytest.mark.parametrize("text", [
    # gather with no list on dst (torch 1.13)
    ("ValueError: Argument ``gather_list`` must be specified on destination rank.\n"),
    # scatter_object_list without the input list on src (torch 2.x)
    ("ValueError: source rank must provide non-None scatter_object_input_list\n"),
    ("[rank0]: ValueError: Argument ``scatter_list`` must be specified on source rank.\n"),
])
def test_gather_scatter_list_rank(text):
    assert sig(text) != "refused-requirement" and sig(text) == "gather-scatter-list-rank"


@pytest.mark.parametrize("text", [
    # a tensor list of the wrong length (all-gather-list-length's), not a root-only list
    ("RuntimeError: Tensor list input to scatter/gather must match number of collective participants but got 1 "
     "inputs with world_size 8 and 1 devices.\n"),
    # accelerate's gather_object of a non-list, its own words
    ("TypeError: Can only gather objects of type list or tuple, got <class 'dict'>\n"),
])
def test_near_misses_are_not_gather_scatter_list_rank(text):
    assert sig(text) != "gather-scatter-list-rank"


@pytest.mark.parametrize("text", [
    # torch 1.13's rebuild_storage_fd, a DataLoader's own worker queue after the worker died: ConnectionResetError
    ('  File "/usr/lib/python3.8/site-packages/torch/multiprocessing/reductions.py", line 297, in rebuild_storage_fd\n'
     "    fd = df.detach()\n"
     '  File "/usr/lib/python3.8/multiprocessing/resource_sharer.py", line 58, in detach\n'
     "    return reduction.recv_handle(conn)\n"
     '  File "/usr/lib/python3.8/multiprocessing/reduction.py", line 189, in recv_handle\n'
     "    return recvfds(s, 1)[0]\n"
     '  File "/usr/lib/python3.8/multiprocessing/connection.py", line 414, in _recv_bytes\n'
     "    buf = self._recv(4)\n"
     "ConnectionResetError: [Errno 104] Connection reset by peer\n"),
])
def test_mp_queue_producer_exited(text):
    assert sig(text) == "mp-queue-producer-exited"


@pytest.mark.parametrize("text", [
    # a Queue's get of a rank's own rendezvous client, refused without any tensor sharing (store-connection's kind)
    ('  File "/usr/lib/python3.10/multiprocessing/connection.py", line 630, in SocketClient\n'
     "    s.connect(address)\n"
     "ConnectionRefusedError: [Errno 111] Connection refused\n"),
    # /dev/shm too small for shared tensors (file_system strategy): not the producer's exit
    ('  File "/usr/lib/python3.10/site-packages/torch/multiprocessing/reductions.py", line 355, in '
     "rebuild_storage_filename\n"
     "    storage = torch.UntypedStorage._new_shared_filename_cpu(manager, handle, size)\n"
     "RuntimeError: unable to mmap 1048576 bytes from file </torch_123_456_0>: Cannot allocate memory (12)\n"),
])
def test_near_misses_are_not_mp_queue_producer_exited(text):
    assert sig(text) != "mp-queue-producer-exited"
