"""Round 83's rule (issue 45), from threads of DeepSpeed's JIT op builds at launch: a log that ends at torch's
"Using <dir> as PyTorch extensions root..." with no build begun in it (every process waiting in FileBaton.wait on a
lock no build holds), and a stack standing in torch/utils/file_baton.py's wait (py-spy, faulthandler, a Ctrl-C
traceback), read as stale-extension-lock; a second wording of each, in another version's or caller's words than the
corpus case it was written from (OpenRLHF/OpenRLHF#208), and near misses that must not be read as it: a load that goes
on, a build under way, an error after the line, another thread's wait, another library's file lock."""

import pytest
from explain_rounds import sig

from dscluster import explain

ROOT = "as PyTorch extensions root..."


@pytest.mark.parametrize("text", [
    # DeepSpeed-Chat step 3 on 8 ranks hanging there (deepspeedai/DeepSpeedExamples#842), torch cu117's folder and a
    # DeepSpeed log line before it: the ranks' lines after ZeRO-3's model init, the last words of the log
    ("[2024-01-02 07:30:41,488] [INFO] [partition_parameters.py:348:__exit__] finished initializing model - "
     "num_params = 517, num_elems = 2.78B\n"
     + f"Using /root/.cache/torch_extensions/py39_cu117 {ROOT}\n" * 4),
    # py-spy dump of a stuck rank (deepspeedai/DeepSpeedExamples#302): its main thread in FileBaton.wait
    ("Thread 46930 (idle): \"MainThread\"\n"
     "    wait (torch/utils/file_baton.py:42)\n"
     "    _jit_compile (torch/utils/cpp_extension.py:1522)\n"
     "    load (torch/utils/cpp_extension.py:1284)\n"
     "    jit_load (deepspeed/ops/op_builder/builder.py:480)\n"
     "    load (deepspeed/ops/op_builder/builder.py:449)\n"
     "    __init__ (deepspeed/runtime/engine.py:377)\n"
     "Thread 47073 (idle): \"Thread-1\"\n"
     "    wait (threading.py:324)\n"),
    # faulthandler's dump at a test's timeout (PASSIONLab/OpenEquivariance#156, torch 2.x's file_baton.py line 50)
    ("Timeout (0:02:00)!\n"
     "File \"/opt/venv/lib/python3.12/site-packages/torch/utils/file_baton.py\", line 50 in wait\n"
     "File \"/opt/venv/lib/python3.12/site-packages/torch/utils/cpp_extension.py\", line 2156 in _jit_compile\n"),
    # a rank stopped with Ctrl-C while it waited: Python's traceback through _jit_compile's baton.wait() into
    # file_baton.py's time.sleep (torch/utils/file_baton.py, FileBaton.wait)
    (f"Using /home/qi/.cache/torch_extensions/py311_cu117 {ROOT}\n"
     "Traceback (most recent call last):\n"
     "  File \"/home/qi/env/lib/python3.11/site-packages/torch/utils/cpp_extension.py\", line 1522, in _jit_compile\n"
     "    baton.wait()\n"
     "  File \"/home/qi/env/lib/python3.11/site-packages/torch/utils/file_baton.py\", line 42, in wait\n"
     "    time.sleep(self.wait_seconds)\n"
     "KeyboardInterrupt\n"),
])
def test_second_wordings(text):
    assert sig(text) == "stale-extension-lock"


def test_the_evidence_is_the_line_it_stopped_at():
    found = explain.explain("[INFO] [engine.py:77] data_parallel_size: 1\n"
                            f"Using /root/.cache/torch_extensions/py39_cu117 {ROOT}\n")
    assert found.evidence == f"Using /root/.cache/torch_extensions/py39_cu117 {ROOT}"


@pytest.mark.parametrize("text", [
    # the load went on: the op was there and loaded (huggingface/transformers#12715's test log)
    (f"Using /github/home/.cache/torch_extensions {ROOT}\n"
     "No modifications detected for re-loaded extension module utils, skipping build step...\n"
     "Loading extension module utils...\n"
     "Time to load utils op: 0.0005452632904052734 seconds\n"),
    # stuck after the op loaded (Lightning-AI/litgpt#169): not the JIT lock
    ("Loading extension module utils...\n"
     "Time to load utils op: 11.247538805007935 seconds\n"
     "Loading extension module utils...\n"
     "Time to load utils op: 11.123851776123047 seconds\n"),
    # a build under way in the same log: a rank compiles, another rank's line comes last (azshue/AutoPoison#6)
    ("Installed CUDA version 11.3 does not match the version torch was compiled with 11.8 but since the APIs are "
     "compatible, accepting this combination\n"
     f"Using /home/wangyidan/.cache/torch_extensions/py39_cu118/ {ROOT}\n"
     "Creating extension directory /home/wangyidan/.cache/torch_extensions/py39_cu118/cpu_adam...\n"
     "Installed CUDA version 11.3 does not match the version torch was compiled with 11.8 but since the APIs are "
     "compatible, accepting this combination\n"
     f"Using /home/wangyidan/.cache/torch_extensions/py39_cu118/ {ROOT}\n"),
    # the build's own lines last (bghira/SimpleTuner#333): compiling, not waiting
    (f"Using /home/master/.cache/torch_extensions/py310_cu118 {ROOT}\n"
     "Creating extension directory /home/master/.cache/torch_extensions/py310_cu118/cpu_adam...\n"
     "Emitting ninja build file /home/master/.cache/torch_extensions/py310_cu118/cpu_adam/build.ninja...\n"
     "Building extension module cpu_adam...\n"
     "Allowing ninja to set a default number of workers... (overridable by setting the environment variable "
     "MAX_JOBS=N)\n"),
    # an error after the line (deepspeedai/DeepSpeed#4355)
    ("[WARNING]  cpu_adam cuda is missing or is incompatible with installed torch, only cpu ops can be compiled!\n"
     f"Using /home/sushuting/.cache/torch_extensions/py38_cu117 {ROOT}\n\n"
     "Traceback (most recent call last):\n"
     "  File \"/nvme/nvme0//anaconda3/envs/py3/lib/python3.8/runpy.py\", line 194, in _run_module_as_main\n"
     "    return _run_code(code, main_globals, None,\n"),
    # another thread's wait in the same py-spy dump (tqdm's monitor in threading.Condition.wait)
    ("Thread 47073 (idle): \"Thread-1\"\n"
     "    wait (threading.py:324)\n"
     "    wait (threading.py:622)\n"
     "    run (tqdm/_monitor.py:60)\n"),
    # the filelock package's own lock on Triton's autotune cache (deepspeedai/DeepSpeed#5205), not torch's baton
    ("2024-02-27 15:56:22,424 - /data2/pfluo/micromamba/envs/torch220/lib/python3.10/site-packages/filelock/_api.py"
     "[line:254] - DEBUG: Attempting to acquire lock 140192009925296 on "
     "/data2/pfluo/.triton/autotune/Fp16Matmul_2d_kernel.pickle.lock\n"),
])
def test_near_misses(text):
    assert sig(text) != "stale-extension-lock"
