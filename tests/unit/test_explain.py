"""Every known failure signature has a real-looking log under tests/data/explain/<signature>.log."""

from pathlib import Path

import pytest

from dscluster import explain, refusals

DATA = Path(__file__).resolve().parents[1] / "data" / "explain"


@pytest.mark.parametrize("sig", [s.name for s in explain.SIGNATURES])
def test_each_signature_is_recognised_in_its_log(sig):
    log = DATA / f"{sig}.log"
    assert log.is_file(), f"missing test log for signature {sig}"
    found = explain.explain(log.read_text())
    assert found is not None and found.signature == sig
    assert found.cause and found.fix and found.evidence


def test_root_cause_wins_over_the_symptom_on_other_ranks():
    text = (DATA / "cuda-oom.log").read_text()
    assert "remote process exited" in text  # the symptom is there too
    assert explain.explain(text).signature == "cuda-oom"
    assert explain.explain(text).retry is False


def test_unknown_text_is_not_explained_and_files_pick_the_most_specific(tmp_path):
    assert explain.explain("step 1 loss 3.2\nall good\n") is None
    a, b = tmp_path / "launcher.log", tmp_path / "rank1.log"
    a.write_text((DATA / "gloo-peer-closed.log").read_text())
    b.write_text((DATA / "module-not-found.log").read_text())
    assert explain.explain_files([a, b]).signature == "module-not-found"
    assert explain.explain_files([tmp_path / "missing.log"]) is None


def test_explanation_serialises_for_run_json():
    d = explain.explain((DATA / "address-in-use.log").read_text()).to_dict()
    assert {"signature", "cause", "fix", "retry", "restart_can_help", "evidence"} <= set(d)
    assert d["signature"] == "address-in-use" and d["retry"] is True and d["restart_can_help"] is True


def test_the_programs_own_error_and_fix_lines_are_the_explanation_and_beat_the_sigkill(tmp_path):
    # launch.py SIGKILLs the sibling ranks after the first fails: its "sigkill_handler" line is noise.
    launcher, rank0, rank1 = tmp_path / "launcher.log", tmp_path / "x_rank0.log", tmp_path / "x_rank1.log"
    launcher.write_text((DATA / "input-error-exit.log").read_text())
    rank1.write_text("[rank 1] error: the save directory /ro/ckpt is not writable\n"
                     "[rank 1]   fix: pick a writable --save-dir\n")
    rank0.write_text("error: data directory /tmp/nope-data does not exist\n"
                     "  fix: prepare it first: dscluster data prepare SRC... --out DIR\n")
    found = explain.explain_files([launcher, rank1, rank0])
    assert found.signature == "program-error" and found.retry is False
    assert found.cause == "the save directory /ro/ckpt is not writable"  # the first failing rank's file first
    assert found.fix == "pick a writable --save-dir"
    zh = explain.explain("錯誤: 資料目錄 /x 不存在\n  解法: 先準備資料\n")
    assert zh.cause == "資料目錄 /x 不存在" and zh.fix == "先準備資料"
    # a library's ERROR line is not ours: it is quoted as the log's first error line (errorline.py)
    assert explain.explain("ERROR: pip could not install\n").signature == "error-line"


def test_first_failing_rank_exit_code_is_read_from_the_launcher_log(tmp_path):
    from dscluster.runs.supervising.verdict import first_rank_exit_code

    log = tmp_path / "launcher.log"
    log.write_text("[dscluster 10:00:00] attempt 1: deepspeed ...\nexits with return code = 1\n"
                   "[dscluster 10:00:09] attempt 2: deepspeed ...\n" + (DATA / "input-error-exit.log").read_text())
    assert first_rank_exit_code(log, {}, "attempt 2: ") == 3
    assert first_rank_exit_code(log, {log: 10}, "attempt 2: ") is None
    assert first_rank_exit_code(tmp_path / "none.log", {}, "attempt 1: ") is None


def test_the_launchers_sigkill_handler_is_not_taken_for_a_kill():
    # Every launch.py teardown line comes from "sigkill_handler"; a rank that aborted (-6) at exit was
    # once explained as an OOM kill.
    text = (DATA / "aborted.log").read_text()
    assert "sigkill_handler" in text
    assert explain.explain(text).signature == "aborted"
    assert explain.explain("[INFO] [launch.py:253:sigkill_handler] Killing subprocess 26\n") is None


def test_a_template_explanation_is_recorded_in_english_and_shown_in_the_readers_language(monkeypatch):
    exp = explain.custom("node-down", "{nodes} did not come back within {limit}s after the failure, so the run "
                         "could not restart.", "{heal}, then launch again", "unreachable: node2", retry=False,
                         nodes="node2", limit="120", heal="dscluster sim heal node2")
    d = exp.to_dict()
    # run.json stays readable as it is: English, values filled in
    assert d["cause"].startswith("node2 did not come back within 120s") and d["fix"].startswith("dscluster sim heal")
    monkeypatch.setenv("DSCLUSTER_LANG", "zh_TW")
    cause, fix = explain.localized(d)
    assert "node2" in cause and "120" in cause and "秒" in cause
    assert fix.startswith("dscluster sim heal node2") and "然後" in fix
    # a plain signature's text goes through the catalog as before
    cause, _fix = explain.localized(explain.explain((DATA / "address-in-use.log").read_text()).to_dict())
    assert cause != explain.explain((DATA / "address-in-use.log").read_text()).cause


def test_the_panel_api_shows_a_runs_explanation_in_the_servers_language(tmp_path, monkeypatch):
    import json

    from dscluster.jupyter import rundata

    exp = explain.custom("node-down", "{nodes} did not come back within {limit}s after the failure, so the run "
                         "could not restart.", "{heal}, then launch again", retry=False,
                         nodes="node3", limit="60", heal="dscluster sim heal node3")
    run_dir = tmp_path / "r1-20261129-000000-abcd"
    run_dir.mkdir()
    (run_dir / "run.json").write_text(json.dumps({"id": run_dir.name, "status": "failed", "explanation": exp.to_dict()}))
    monkeypatch.setenv("DSCLUSTER_LANG", "zh_TW")
    shown = rundata.summary(rundata.RunRef(run_dir.name, run_dir))["explanation"]
    assert shown["signature"] == "node-down" and "node3" in shown["cause"] and "60 秒" in shown["cause"]


# ---- the first failing rank's own words (issue 30) -------------------------------------------------------
PDSH_LOG = """\
node2: [2026-12-01 10:00:05,300] [INFO] [engine.py:100:step] step 3
node2: [rank1]: Traceback (most recent call last):
node2: [rank1]:   File "/shared/train.py", line 40, in <module>
node2: [rank1]:     engine.backward(loss)
node2: [rank1]:   File "/opt/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 2501, in all_reduce
node2: [rank1]:     work = group.allreduce([tensor], opts)
node2: [rank1]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [10.0.0.1]:21877
node1: [2026-12-01 10:00:04,900] [INFO] [engine.py:100:step] step 3
node1: [rank0]: Traceback (most recent call last):
node1: [rank0]:   File "/shared/train.py", line 31, in <module>
node1: [rank0]:     loss = step(model, batch)
node1: [rank0]:   File "/shared/lib/steps.py", line 12, in step
node1: [rank0]:     return model(batch["x"]) + "1"
node1: [rank0]:   File "/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1775, in _call_impl
node1: [rank0]:     return forward_call(*args, **kwargs)
node1: [rank0]: TypeError: unsupported operand type(s) for +: 'Tensor' and 'str'
pdsh@node1: node2: ssh exited with exit code 1
pdsh@node1: node1: ssh exited with exit code 1
"""


def test_a_ranks_own_exception_beats_the_symptom_on_the_others_whatever_the_log_order():
    exp = explain.explain(PDSH_LOG)
    assert exp.signature == "python-error" and exp.retry is False  # a TypeError comes back on every restart
    err = exp.error
    assert err["type"] == "TypeError" and err["message"].startswith("unsupported operand")
    assert err["rank"] == 0 and err["node"] == "node1"
    assert err["where"] == "/shared/lib/steps.py:12"  # the innermost frame in the user's code, not torch's
    assert exp.error_line == "rank 0 on node1: TypeError: unsupported operand type(s) for +: 'Tensor' and 'str' " \
                             "(/shared/lib/steps.py:12)"
    d = exp.to_dict()
    assert "rank 0 (node1)" in d["cause"] and "TypeError" in d["cause"] and "steps.py:12" in d["cause"]
    assert "RUN" not in d["fix"] and "{" not in d["fix"] + d["cause"]


def test_which_rank_failed_first_is_decided_by_time_stamps_not_log_order():
    later = ("node1: [2026-12-01 10:00:09,000] [INFO] [engine.py:1:step] step 4\n"
             "node1: Traceback (most recent call last):\n"
             'node1:   File "/shared/train.py", line 50, in <module>\n'
             "node1: KeyError: 'labels'\n")
    earlier = ("node3: [2026-12-01 10:00:02,000] [INFO] [engine.py:1:step] step 2\n"
               "node3: Traceback (most recent call last):\n"
               'node3:   File "/shared/data.py", line 7, in load\n'
               "node3: FileNotFoundError: [Errno 2] No such file or directory: '/shared/data/part-3.bin'\n")
    exp = explain.explain(later + earlier)
    assert exp.error["node"] == "node3" and exp.error["type"] == "FileNotFoundError"
    assert exp.error["where"] == "/shared/data.py:7"


def test_rank_files_name_their_rank_and_node_and_their_times_order_them(tmp_path):
    import os

    launcher = tmp_path / "launcher.log"
    launcher.write_text("[INFO] [launch.py:253:sigkill_handler] Killing subprocess 118\n")
    r0, r2 = tmp_path / "train_rank0.log", tmp_path / "train_rank2.log"
    r0.write_text("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer\n")
    r2.write_text((DATA / "device-mismatch.log").read_text().replace("[rank1]: ", ""))
    os.utime(r2, (1000, 1000))
    os.utime(r0, (1005, 1005))
    exp = explain.explain_files([launcher, r0, r2], nodes={0: "node0", 2: "node2"})
    assert exp.signature == "device-mismatch" and exp.retry is False
    assert exp.error["rank"] == 2 and exp.error["node"] == "node2" and exp.error["where"] == "/workspace/train.py:22"


def test_every_signature_has_a_fix_without_unfilled_placeholders():
    import re as _re

    for sig in explain.SIGNATURES:
        for text in (sig.cause, sig.fix):
            assert "RUN" not in text.split() and "--rank R" not in text, (sig.name, text)
            assert not _re.search(r"\{(?!op_text|missing_text)\w+\}", text), (sig.name, text)


@pytest.mark.parametrize("sig,can", [
    ("memcg-oom", False), ("killed", True), ("ssh-unreachable", False), ("module-not-found", False),
    ("ds-batch-assert", False), ("local-rank-arg", False), ("hostfile-syntax", False), ("driver-too-old", False),
    ("cuda-oom", False), ("undefined-symbol", False), ("address-in-use", True), ("ssh-255", True),
    ("collective-timeout", False)])
def test_restart_can_help_matches_what_a_restart_changes(sig, can):
    found = explain.explain((DATA / f"{sig}.log").read_text())
    assert found.signature == sig and found.restart_can_help is can


def test_a_python_error_no_signature_knows_is_restarted_only_when_it_is_of_a_kind_that_passes():
    assert explain.explain((DATA / "python-error.log").read_text()).retry is False  # ZeroDivisionError
    tb = 'Traceback (most recent call last):\n  File "/w/t.py", line 3, in <module>\n{}\n'
    # Any other error comes back on a restart (the corpus: 88 of 96 unknown Python errors did).
    exp = explain.explain(tb.format("RuntimeError: something odd"))
    assert exp.signature == "python-error" and exp.retry is False and exp.error["where"] == "/w/t.py:3"
    assert "restart cannot help" in exp.fix
    # A timeout, a connection refused or dropped: by its type, or by its words.
    for line in ("TimeoutError: the data server did not answer", "ConnectionRefusedError: [Errno 111] refused",
                 "RuntimeError: fetching shard 3 timed out after 30 s",
                 "OSError: [Errno 111] Connection refused", "requests.exceptions.ReadTimeout: read timeout=10"):
        exp = explain.explain(tb.format(line))
        assert exp.signature == "python-error" and exp.retry is True, line
        assert exp.fix.startswith("A restart may help"), line


def test_a_python_error_raised_inside_a_library_names_the_library_and_its_frame():
    log = ('Traceback (most recent call last):\n  File "/home/u/train.py", line 88, in main\n    m = load(p)\n'
           '  File "/opt/conda/lib/python3.10/site-packages/transformers/modeling_utils.py", line 2520, in load\n'
           '    raise RuntimeError(msg)\nRuntimeError: the index names a shard that is not there\n')
    d = explain.explain(log).to_dict()
    assert d["signature"] == "python-error" and d["restart_can_help"] is False
    assert d["cause"] == ("a rank raised RuntimeError inside transformers (transformers/modeling_utils.py:2520), "
                          "called from /home/u/train.py:88; the other ranks stopped because of it.")
    assert d["fix"].startswith("Its message says what transformers could not do")
    # Every frame a library's (a launcher's own code, Python's json): the innermost is named once.
    only = ('Traceback (most recent call last):\n  File "/usr/lib/python3.11/json/decoder.py", line 355, in raw\n'
            'json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n')
    d = explain.explain(only).to_dict()
    assert d["cause"] == "a rank raised JSONDecodeError inside json (json/decoder.py:355); the other ranks stopped " \
        "because of it." or d["signature"] != "python-error", d
    # The user's own frame innermost: no library named.
    own = 'Traceback (most recent call last):\n  File "/w/t.py", line 3, in <module>\nValueError: bad shape\n'
    assert "inside" not in explain.explain(own).to_dict()["cause"]


def test_python_dash_m_form_of_a_missing_module():
    exp = explain.explain("/usr/bin/python3: Error while finding module specification for 'trainer.main' "
                          "(ModuleNotFoundError: No module named 'trainer')\n")
    assert exp.signature == "module-not-found" and exp.retry is False


def test_a_collective_timeout_names_the_operation_and_the_ranks_that_never_arrived():
    d = explain.explain((DATA / "collective-timeout.log").read_text()).to_dict()
    assert "allreduce (sequence number 812)" in d["cause"]
    assert "never arrived: 2." in d["cause"]


def test_the_local_rank_argument_error_gets_the_no_local_rank_fix():
    exp = explain.explain((DATA / "local-rank-arg.log").read_text())
    assert exp.signature == "local-rank-arg" and "--no_local_rank" in exp.fix
    assert "unrecognized arguments: --local_rank=0" in exp.error_line


def test_own_error_templates_are_translated(monkeypatch):
    from dscluster.i18n import catalog

    monkeypatch.setenv("DSCLUSTER_LANG", "zh_TW")
    catalog.cache_clear()
    for text in (PDSH_LOG, (DATA / "segfault.log").read_text(), "terminate called after throwing an instance of "
                 "'c10::Error'\n  what():  CUDA error: misaligned address\n"):
        d = explain.explain(text).to_dict()
        cause, fix = explain.localized(d)
        assert cause != d["cause"] and fix != d["fix"], d


@pytest.mark.parametrize("text,sig", [
    ("main.py: error: unrecognized arguments: --local-rank=0\n", "local-rank-arg"),  # torch's launchers' spelling
    ("ImportError: /home/u/.cache/torch_extensions/py310_cu117/fused_adam/fused_adam.so: cannot open shared object "
     "file: No such file or directory\n", "op-build-failed"),  # the build failed before: no .so to load
    ("h1:12:12 [0] NCCL INFO NET/Socket : Using [0]bond0:192.168.1.161<0> [1]br-05ab815fa14e:172.19.0.1<0>\n"
     "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1191, unhandled system error, NCCL version 2.10.3\n",
     "nccl-wrong-interface"),
    ("n3:7:7 [3] bootstrap.cc:97 NCCL WARN Bootstrap : no socket interface found\n"
     "jax.errors.JaxRuntimeError: INTERNAL: NCCL operation ncclGetUniqueId(&id) failed: invalid usage\n",
     "nccl-no-interface"),
    # The node's own facts beat the generic families their words also fit: the kernel's line for NVML's mismatch
    # (not nodes running different versions), the driver's library missing (not any library), a step refused
    # because the job's own steps hold the nodes (not a request no node can satisfy).
    ("NVRM: API mismatch: the client has the version 550.127.05, but this kernel module has the version "
     "535.183.01.\n", "driver-library-mismatch"),
    ("ImportError: libcuda.so.1: cannot open shared object file: No such file or directory\n", "container-gpu"),
    ("srun: error: Unable to create step for job 77: Requested nodes are busy\n", "slurm-step-busy"),
    ("torch.AcceleratorError: CUDA error: system not yet initialized\n", "fabric-manager"),
    ("[rank0]: KeyError: 'LOCAL_RANK'\n", "not-launched"),
    ("OSError: [Errno 24] Too many open files: '/data/shard_0001.arrow'\n", "open-files-limit"),
    ("AssertionError: ZeRO stage 3 is not supported with the legacy pipeline engine\n", "ds-incompatible"),
    ('mpirun: Error: unknown option "--bind-to-core"\n', "launcher-option-unknown"),  # not only Slurm's words
    ("pdsh@n1: n2: mcmd: connect failed: Connection refused\n", "pdsh-rcmd"),  # mrsh's, not ssh's refusal
    ("sbatch: error: unrecognized option '--workdir=/shared/x'\n", "launcher-option-unknown"),  # not a refused request
    ("pdsh: invalid option -- 'z'\n", "launcher-option-unknown"),  # each backend's own programs
    ("sbatch.exe: error: Batch job submission failed: Invalid account or account/partition combination specified\n",
     "slurm-request-invalid"),
    # Round 8's families, each in a second wording of the component that prints it (not the corpus's words): a
    # checkpoint that cannot be read, one that does not fit the model, the Hub out of reach, the linker's missing
    # library (lld's, MSVC's code in any language), a cache directory another user owns or a read-only HOME, nvcc
    # refusing a C++ standard, an architecture transformers does not know, DeepSpeed's async_io op without libaio.
    ("RuntimeError: unexpected EOF, expected 1834215 more bytes. The file might be corrupted.\n", "ckpt-corrupt"),
    ("_pickle.UnpicklingError: invalid load key, 'v'.\n", "ckpt-corrupt"),  # a Git LFS pointer in place of weights
    ('RuntimeError: Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "fc.weight". \n\t'
     'Unexpected key(s) in state_dict: "module.fc.weight".\n', "ckpt-model-mismatch"),
    ("OSError: We couldn't connect to 'https://hf-mirror.com' to load this file, couldn't find it in the cached files\n",
     "hub-unreachable"),
    ("requests.exceptions.ConnectionError: HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded "
     "with url: /api/models/gpt2 (Caused by NewConnectionError('<urllib3.connection.HTTPSConnection object at 0x7f>: "
     "Failed to establish a new connection: [Errno 101] Network is unreachable'))\n", "hub-unreachable"),
    ("ld.lld: error: unable to find library -lcuda\n", "link-lib-missing"),
    ("LINK : fatal error LNK1181: 无法打开输入文件“cudart.lib”\n", "link-lib-missing"),
    ("PermissionError: [Errno 13] Permission denied: '/tmp/torch_extensions/py310_cu121/cpu_adam'\n",
     "extensions-dir-permission"),
    ("OSError: [Errno 30] Read-only file system: '/home/app/.triton'\n", "extensions-dir-permission"),
    ("nvcc fatal   : Value 'c++20' is not defined for option 'std'\n", "compiler-unsupported"),
    ("ValueError: The checkpoint you are trying to load has model type `gemma3` but Transformers does not recognize "
     "this architecture.\n", "package-too-old"),
    ("RuntimeError: Unable to JIT load the async_io op due to it not being compatible due to hardware/software "
     "issue.\n", "libaio-missing"),
    ("pod/trainer-1: Failed to initialise NVML: Unknown Error\n", "container-gpu-lost"),
    # Round 9's family in the HF Trainer's own loader's wording (the corpus has its DeepSpeed integration's): a
    # checkpoint of weights only asked to resume.
    ("  File \"/w/transformers/trainer.py\", line 2159, in _load_from_checkpoint\n"
     "ValueError: Can't find a valid checkpoint at ./output/checkpoint-500\n", "ckpt-missing-optimizer-states"),
    # Round 10's family in torch.utils.cpp_extension's words (an extension built with another CUDA toolkit than torch's),
    # here from a JIT op build in a rank rather than pip's wheel build.
    ("[rank0]:   File \"/env/lib/python3.11/site-packages/torch/utils/cpp_extension.py\", line 1967, in _jit_compile\n"
     "[rank0]: RuntimeError: \n[rank0]: The detected CUDA version (12.6) mismatches the version that was used to compile\n"
     "[rank0]: PyTorch (12.1). Please make sure to use the same CUDA versions.\n", "version-mismatch"),
])
def test_general_wordings_of_the_same_causes(text, sig):
    assert explain.explain(text).signature == sig


@pytest.mark.parametrize("text", [
    "ValueError: Zero-shot evaluation is not supported with this model\n",  # "Zero" without a stage is not ZeRO
    "RuntimeError: Logging system not yet initialized\n",  # not CUDA's error 802
    "KeyError: 'RANKING'\n",  # not a launcher's variable
    "PermissionError: [Errno 13] Permission denied: '/data/out/pytorch_model.bin'\n",  # not a JIT cache directory
    "KeyError: 'model.embed_tokens.weight'\n",  # a script's own lookup, not a model_type transformers lacks
    "ValueError: Can't find a valid config at /data/run\n",  # not a checkpoint
    "RuntimeError: failed to resume from checkpoint server: Connection reset\n",  # not the Trainer's DeepSpeed words
    # torch's warning that only the minor CUDA version differs (it goes on), not its refusal to build
    "RuntimeError: The detected CUDA version (12.1) has a minor version that differs from the one used to compile\n",
])
def test_words_near_a_signatures_are_not_taken_for_it(text):
    # the OS's own words are read (errorline.py: a generic permission-denied, the rank's error kept)
    expected = {"permission-denied"} if "[Errno 13]" in text else {"python-error"} | refusals.NAMES  # generic
    found = explain.explain(text)
    assert found.signature in expected and found.error["kind"] == "python"


def test_dsclusters_own_config_error_in_a_rank_is_not_worth_a_restart():
    """dscluster.checkpoint's ConfigError (no checkpoint directory) in a user's script fails the same way every time."""
    log = ("Traceback (most recent call last):\n"
           '  File "/work/train.py", line 40, in <module>\n    ckpt.save(engine, step)\n'
           '  File "/usr/lib/python3/site-packages/dscluster/checkpoint.py", line 45, in _dir\n    raise ConfigError(x)\n'
           "dscluster.errors.ConfigError: no checkpoint directory: save_dir is not given\n")
    exp = explain.explain(log)
    assert exp.retry is False and exp.error["where"] == "/work/train.py:40", exp


def test_a_rank_killed_by_a_signal_beats_what_the_others_saw_of_its_death():
    """Slurm: srun names the killed task; rank 0's gloo read error is only the symptom of that kill."""
    text = ("[rank0]: RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:537] Read error "
            "[10.202.1.12]:4242: Connection reset by peer\n"
            "srun: error: node2: task 2: Killed\n")
    found = explain.explain(text)
    assert found.signature == "killed" and found.retry and "node2" in found.error_line, found
    # OOM evidence anywhere names the root cause, and a restart cannot help with it
    oom = explain.explain(text + "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=4.0\n")
    assert oom.signature == "memcg-oom" and not oom.retry, oom
    # a gloo transport error alone is a symptom, not a rank's own error
    alone = explain.explain("[rank0]: RuntimeError: [/x/gloo/transport/tcp/pair.cc:537] Read error [10.0.0.2]:1\n")
    assert alone is None or alone.error is None or alone.error.get("symptom"), alone


def test_a_toolchain_programs_own_error_line_is_no_host_and_no_program_verdict():
    # `collect2: error: ...` (gcc's linker driver) twice looked like a host prefix, and what followed like dscluster's
    # own `error:` verdict: a compiler's, linker's or package manager's name is a program's, never a node's.
    text = "/usr/bin/ld: cannot find -lcuda\ncollect2: error: ld returned 1 exit status\n" * 2
    assert explain.explain(text).signature == "link-lib-missing"
    exp = explain.explain("collect2: error: ld returned 1 exit status\nmake: *** [all] Error 2\n"
                          "collect2: error: ld returned 1 exit status\nninja: error: build stopped\n")
    assert exp is None or exp.signature != "program-error"


def test_a_build_tools_own_error_line_is_no_program_verdict_and_the_compilers_error_above_it_is_the_cause():
    # Round 11: setuptools' `error: command 'nvcc' failed with exit status 1` (at the start of a line, as dscluster's
    # own verdict is) was read as the program's own error, so the compiler's missing header above it never answered.
    # A second wording: newer setuptools' `exit code`, pip's `error: subprocess-exited-with-error` under a Python.h.
    text = ("/opt/x/csrc/ops.cu:3:10: fatal error: cusparse.h: No such file or directory\n"
            "compilation terminated.\n"
            "error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1\n")
    assert explain.explain(text).signature == "build-header-missing"
    pip = ("  src/fast.c:1:10: fatal error: Python.h: No such file or directory\n"
           "error: subprocess-exited-with-error\n"
           "error: legacy-install-failure\n")
    assert explain.explain(pip).signature == "build-header-missing"
    # near misses: the build tool's line alone is a failed build, not the program's verdict...
    assert explain.explain("error: command 'x86_64-linux-gnu-gcc' failed with exit status 1\n").signature == \
        "op-build-failed"
    alone = explain.explain("error: metadata-generation-failed\n")
    assert alone is None or alone.signature != "program-error", alone
    # ...and dscluster's own verdict that merely starts with "command" is still its own
    own = explain.explain("error: command 'train' is not a dscluster program\n  fix: give the script path\n")
    assert own.signature == "program-error" and own.fix == "give the script path"
