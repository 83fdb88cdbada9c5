"""Round 149's rules (issue 45), from NVIDIA/nccl's tracker (2025-2026): a rank's crash whose backtrace names a
function of NCCL's RAS subsystem (src/ras/: rasMsgHandlePeersUpdate, rasClientRunComms, ...), read as nccl-ras-crash
(NCCL_RAS_ENABLE=0, or an NCCL release with the fix) instead of a segmentation fault of unknown origin: second
wordings (other crash handlers' and backtracers' formats of the same frames) and near misses that must not be read as
it."""

import pytest
from explain_rounds import sig, translated_and_final

NEW = ("nccl-ras-crash",)


@pytest.mark.parametrize("text", [
    # UCX's handler (ucs_handle_error) with NCCL's symbols resolved: backtrace_symbols' `lib(name+offset)` form
    ("[node3:288505:0:296459] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x48)\n"
     "==== backtrace (tid: 296459) ====\n"
     " 0  /usr/lib/libucs.so.0(ucs_handle_error+0x2d4) [0x7fedc925c274]\n"
     " 1  /usr/lib/libucs.so.0(+0x2d44c) [0x7fedc925c44c]\n"
     " 2  /opt/nccl/lib/libnccl.so.2(rasMsgHandlePeersUpdate+0x57) [0x7ff1c18c1057]\n"
     " 3  /opt/nccl/lib/libnccl.so.2(rasMsgHandle+0x9d) [0x7ff1c18c309d]\n"),
    # Abseil's failure signal handler (TensorFlow's, JAX's processes) with the frame as a C++ mangled name of a
    # file-local function (`_ZL<len><name><args>`)
    ("*** SIGSEGV received at time=1737612345 on cpu 12 ***\n"
     "    @     0x7ff1c18c1057  /opt/nccl/lib/libnccl.so.2(_ZL23rasMsgHandlePeersUpdateP7rasConn+0x57)\n"),
    # gdb's words on a core of NCCL 2.27.3 queried on its RAS port (NVIDIA/nccl#1762: rasClientRunComms)
    ("Thread 9 \"python\" received signal SIGSEGV, Segmentation fault.\n"
     "[Switching to Thread 0x7f5a2effd640 (LWP 4242)]\n"
     "#0  0x00007f5a8c2e1a10 in rasClientRunComms (client=0x7f5a10001230) at ras/client_support.cc:944\n"
     "#1  0x00007f5a8c2e3b52 in rasClientRun (client=0x7f5a10001230) at ras/client_support.cc:330\n"),
    # Open MPI's handler (NVIDIA/nccl#1669's first line), then its frames
    ("[rtptest1621:405884] *** Process received signal ***\n"
     "[rtptest1621:405884] Signal: Segmentation fault (11)\n"
     "[rtptest1621:405884] [ 2] /usr/lib/x86_64-linux-gnu/libnccl.so.2(ncclRasCommInit+0x1b2)[0x7f3c6a4e21b2]\n"),
])
def test_second_wordings(text):
    assert sig(text) == "nccl-ras-crash"


@pytest.mark.parametrize("text", [
    # NVIDIA/nccl#1669: RAS's INFO line, then Open MPI's handler with no frame posted: nothing names RAS as the crash
    ("rtptest1621:405884:407462 [0] NCCL INFO RAS client listening socket at ::1<28028>\n"
     "[rtptest1621:405884] *** Process received signal ***\n"),
    # a hung job's dump of every thread (gdb's `thread apply all bt`): the RAS thread idle in its loop
    ("Thread 7 (Thread 0x7f5a2effd640 (LWP 4240) \"python\"):\n"
     "#0  0x00007f5a9a11ebcf in poll () from /lib/x86_64-linux-gnu/libc.so.6\n"
     "#1  0x00007f5a8c2d0e4d in rasThreadMain () at ras/ras.cc:520\n"),
    # a crash elsewhere, then the other threads' stacks: the RAS thread idle, not the crashing one
    ("Fatal Python error: Segmentation fault\n"
     "Thread 0x00007f5a2effd640 (most recent call first):\n"
     "#1  0x00007f5a8c2d0e4d in rasThreadMain () at ras/ras.cc:520\n"
     "#2  0x00007f5a8c2d1a3e in rasSockEventLoop () at ras/ras.cc:480\n"),
    # nvdiffrast's rasterizer crashing under Python's faulthandler (`line N in name`): not NCCL's
    ("Fatal Python error: Segmentation fault\n\n"
     "Current thread 0x00007f3b1c9f2740 (most recent call first):\n"
     "  File \"/opt/conda/lib/python3.10/site-packages/nvdiffrast/torch/ops.py\", line 246 in forward\n"
     "  File \"/opt/conda/lib/python3.10/site-packages/nvdiffrast/torch/ops.py\", line 311 in rasterize\n"),
    # NCCL's own line that RAS is off, beside a segfault of the training script's extension
    ("node1:2201:2201 [0] NCCL INFO NCCL_RAS_ENABLE set by environment to 0.\n"
     "Segmentation fault (core dumped)\n"),
])
def test_near_misses(text):
    assert sig(text) != "nccl-ras-crash"


def test_new_signatures_have_their_texts_and_logs():
    translated_and_final(NEW)
