"""The failing rank's own words out of a log: streams by prefix, tracebacks, native crashes, first failure."""

from dscluster import rankerror, torchrunsummary


def _errors(text: str):
    return [e for st in rankerror.streams(text)
            for e in rankerror.errors(st) + rankerror.launcher_exits(st) + torchrunsummary.rank_errors(st)]


def test_prefixes_split_a_log_into_ranks_and_nodes():
    text = ("node1: [rank0]: step 1\nnode1: [rank1]: step 1\nnode2: [rank2]: step 1\n"
            "node2: [rank2]: Traceback (most recent call last):\n"
            'node2: [rank2]:   File "/w/train.py", line 9, in <module>\n'
            "node2: [rank2]: KeyError: 'x'\n")
    keys = {(st.node, st.rank) for st in rankerror.streams(text)}
    assert {("node1", 0), ("node1", 1), ("node2", 2)} <= keys
    (err,) = _errors(text)
    assert (err.node, err.rank, err.type, err.where) == ("node2", 2, "KeyError", "/w/train.py:9")
    assert err.who == "rank 2 on node2" and err.summary == "KeyError: 'x' (/w/train.py:9)"


def test_srun_labels_and_exception_names_are_not_taken_for_hosts():
    text = "".join(f"{r}: step {s}\n" for s in range(3) for r in range(2)) + "1: ValueError: bad shape\n"
    (err,) = _errors(text)
    assert err.rank == 1 and err.node is None and err.type == "ValueError"


def test_a_chained_exception_is_the_last_one_raised_and_library_frames_are_skipped():
    text = ("Traceback (most recent call last):\n"
            '  File "/opt/venv/lib/python3.11/site-packages/x/load.py", line 3, in load\n'
            "FileNotFoundError: cfg.json\n\n"
            "During handling of the above exception, another exception occurred:\n\n"
            "Traceback (most recent call last):\n"
            '  File "/home/u/run.py", line 20, in <module>\n'
            '  File "/home/u/cfg.py", line 5, in read\n'
            '  File "/opt/venv/lib/python3.11/site-packages/x/load.py", line 9, in load\n'
            "RuntimeError: no config\n")
    (err,) = _errors(text)
    assert err.type == "RuntimeError" and err.where == "/home/u/cfg.py:5" and not err.symptom


def test_a_chain_whose_first_links_have_no_traceback_is_still_the_last_one_raised():
    # huggingface_hub offline (a live capture, transformers 5.23): httpcore's and httpx's ConnectError are printed with
    # no traceback of their own, then chained to what from_pretrained raised. The rank's error is that last one.
    text = ("'[Errno -2] Name or service not known' thrown while requesting HEAD https://huggingface.co/gpt2/x\n"
            "httpcore2.ConnectError: [Errno -2] Name or service not known\n\n"
            "The above exception was the direct cause of the following exception:\n\n"
            "httpx2.ConnectError: [Errno -2] Name or service not known\n\n"
            "The above exception was the direct cause of the following exception:\n\n"
            "Traceback (most recent call last):\n"
            '  File "/home/u/train.py", line 7, in <module>\n'
            "OSError: We couldn't connect to 'https://huggingface.co' to load the files\n")
    (err,) = _errors(text)
    assert err.type == "OSError" and err.where == "/home/u/train.py:7", err
    # A bare exception line with no chain after it is still an error of its own.
    (err,) = _errors("httpx2.ConnectError: [Errno -2] Name or service not known\nstep 3\n")
    assert err.type == "httpx2.ConnectError"


def test_dscluster_logs_output_is_read_by_its_own_prefixes():
    # What `dscluster logs RUN` prints (runs/views/attach.py), pasted into `dscluster explain`: each rank's lines under
    # `[NODE RANK] `, the launcher's under `[launcher] `; the launcher's teardown after the supervisor's `failure
    # detected` is not read (a traceback of the teardown itself was taken for the rank's error).
    text = ("[launcher] [dscluster 03:52:43] attempt 1: python -u -P -m dscluster.launcher.locallaunch script.py\n"
            "[localhost 0] Traceback (most recent call last):\n"
            '[localhost 0]   File "/w/script.py", line 14, in <module>\n'
            "[localhost 0] RuntimeError: Distributed package doesn't have NCCL built in\n"
            "[localhost 1] step 1\n"
            "[launcher] [dscluster 03:53:03] failure detected: exits with return code = 1\n"
            "[launcher] Traceback (most recent call last):\n"
            '[launcher]   File "/w/locallaunch.py", line 168, in terminate_tree\n'
            "[launcher] AttributeError: partially initialized module 'psutil' has no attribute 'NoSuchProcess'\n")
    keys = {(st.node, st.rank) for st in rankerror.streams(text)}
    assert {("localhost", 0), ("localhost", 1), (None, None)} == keys
    (err,) = _errors(text)
    assert (err.node, err.rank, err.type, err.where) == ("localhost", 0, "RuntimeError", "/w/script.py:14")
    # Another text whose lines happen to start with brackets is not taken for it.
    assert {(st.node, st.rank) for st in rankerror.streams("[ok 1] a\nplain\nplain\nplain\n")} == {(None, None)}


def test_native_crashes_and_launcher_reports_are_errors_too():
    text = ("terminate called after throwing an instance of 'c10::DistBackendError'\n"
            "  what():  [PG 0 Rank 1] Process group watchdog thread terminated with exception: ...\n")
    (err,) = _errors(text)
    assert err.kind == "native" and err.type == "c10::DistBackendError" and err.symptom
    summary = ("Root Cause (first observed failure):\n[0]:\n  time      : 2026-12-01_10:00:05\n"
               "  host      : gpu7\n  rank      : 5 (local_rank: 1)\n  exitcode  : -9 (pid: 77)\n"
               "  error_file: <N/A>\n  traceback : Signal 9 (SIGKILL) received by PID 77\n")
    kills = [e for e in _errors(summary) if e.node == "gpu7"]
    assert kills and kills[0].rank == 5 and kills[0].type == "SIGKILL"


def test_the_first_failure_is_a_cause_before_any_symptom_then_the_earliest():
    early_symptom = rankerror.RankError("python", "RuntimeError", "Connection closed by peer", time=1.0, symptom=True)
    late_cause = rankerror.RankError("python", "TypeError", "bad", rank=3, time=9.0)
    earlier_cause = rankerror.RankError("python", "KeyError", "k", rank=1, time=5.0)
    assert rankerror.first_failure([early_symptom, late_cause]) is late_cause
    assert rankerror.first_failure([late_cause, earlier_cause, early_symptom]) is earlier_cause
    assert rankerror.line_time("node1: [2026-12-01 10:00:05,250] [INFO] x") == rankerror.line_time(
        "2026-12-01T10:00:05.250") > rankerror.line_time("[2026-12-01 10:00:04,999]")


def test_an_exception_class_of_any_name_ends_a_traceback():
    """After the frames, the line Python prints last is the exception whatever its class is called (io's
    UnsupportedOperation, dynamo's BackendCompilerFailed, socket.gaierror, a bare Exception) - live round 171."""
    tb = 'Traceback (most recent call last):\n  File "/w/train.py", line 40, in <module>\n    f.write(row)\n'
    for line, typ in (("io.UnsupportedOperation: not writable", "io.UnsupportedOperation"),
                      ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
                       "torch._dynamo.exc.BackendCompilerFailed"),
                      ("socket.gaierror: [Errno -2] Name or service not known", "socket.gaierror"),
                      ("Exception: Could not find the transformer layer class to wrap", "Exception")):
        (err,) = rankerror.errors(rankerror.streams(tb + line + "\n")[0])
        assert (err.type, err.file, err.line) == (typ, "/w/train.py", 40), line
    # A line the script printed between frames (another frame follows it) is not the exception.
    printed = tb.replace('    f.write(row)\n', '    f.write(row)\nLoss: 0.25\n  File "/w/io.py", line 9, in w\n')
    (err,) = rankerror.errors(rankerror.streams(printed + "ValueError: bad row\n")[0])
    assert (err.type, err.message) == ("ValueError", "bad row")
