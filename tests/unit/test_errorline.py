"""The explainer's last word (errorline.py): the OS's own error texts wherever they appear, in the languages glibc
translates them to, and the log's first error line where nothing known is named. Texts written here, not the
corpus's logs."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from dscluster import errorline, explain
from dscluster.i18n import catalog

DATA = Path(__file__).resolve().parents[1] / "data" / "explain"
SRC = Path(__file__).resolve().parents[2] / "src" / "dscluster"
NEW = [s.name for s in errorline.OS_SIGNATURES] + ["error-line"]


@pytest.mark.parametrize("name", NEW)
def test_each_new_signature_is_recognised_in_its_log_and_is_generic(name):
    found = explain.explain((DATA / f"{name}.log").read_text())
    assert found is not None and found.signature == name
    assert found.cause and found.fix and found.evidence
    assert name in explain.GENERIC  # what failed, never a specific cause: scored generic, never "right"


def test_every_text_has_its_zh_tw_translation_with_its_placeholders():
    zh = json.loads((SRC / "locale" / "zh_TW" / "failures.json").read_text(encoding="utf-8"))
    texts = [t for s in (*errorline.OS_SIGNATURES, errorline.ERROR_LINE) for t in (s.cause, s.fix)]
    texts += [t for _, c, f in errorline._WHAT_FILE for t in (c, f)]
    texts += [errorline.ERROR_LINE_TRANSIENT, errorline.ERROR_LINE_NO_RESTART]
    merged = catalog("zh_TW")
    for text in texts:
        assert text in zh and text in merged, text
        assert ("{path}" in text) == ("{path}" in zh[text]) and ("{line}" in text) == ("{line}" in zh[text]), text


# ---- the OS's error texts ---------------------------------------------------------------------------
@pytest.mark.parametrize("line,path", [
    ("cat: /srv/run/hosts.txt: No such file or directory", "/srv/run/hosts.txt"),
    ("cat: /srv/run/hosts.txt: 沒有此一檔案或目錄", "/srv/run/hosts.txt"),  # zh_TW
    ("cat: /srv/a.bin: 没有那个文件或目录", "/srv/a.bin"),  # zh_CN
    ("head: cannot open '/srv/a.bin' for reading: No such file or directory", "/srv/a.bin"),
    ("less: /srv/a.bin: そのようなファイルやディレクトリはありません", "/srv/a.bin"),  # ja
    ("tail: /srv/a.bin: Datei oder Verzeichnis nicht gefunden", "/srv/a.bin"),  # de
    ("wc: /srv/a.bin: Aucun fichier ou dossier de ce type", "/srv/a.bin"),  # fr (older glibc)
    ("wc: /srv/a.bin: Aucun fichier ou dossier de ce nom", "/srv/a.bin"),  # fr
    ("sort: /srv/a.bin: No existe el fichero o el directorio", "/srv/a.bin"),  # es
    ("ls: cannot access '/srv/weights dir': No such file or directory", "/srv/weights dir"),
    ("FileNotFoundError: [Errno 2] No such file or directory: '/srv/tok/vocab.txt'", "/srv/tok/vocab.txt"),
])
def test_a_missing_file_is_named_in_any_language(line, path):
    found = explain.explain(f"step 3\n{line}\n")
    assert found.signature == "file-missing" and found.retry is False
    assert found.params["path"].endswith(path)
    assert found.cause == "A file the program needs is missing: {path}."


@pytest.mark.parametrize("line", [
    "OSError: No such file or directory",
    "Exception: No such file or directory (os error 2)",  # the tokenizers library's io::Error, no path named
    "tokenizers.TokenizerError: No such file or directory",
])
def test_an_exceptions_class_is_never_taken_for_the_missing_path(line):
    """The word before the text is a C program's path (`cat: PATH: ...`), never an exception's class (round 185)."""
    found = explain.explain(f"step 3\n{line}\n")
    assert found.signature == "file-missing" and found.params["path"] == "?", found.params


@pytest.mark.parametrize("path,says", [
    ("/ck/global_step50/zero_pp_rank_3_mp_rank_00_optim_states.pt", "lacks DeepSpeed's states"),
    ("/ck/global_step50/mp_rank_00_model_states.pt", "lacks DeepSpeed's states"),
    ("/ck/latest", "lacks DeepSpeed's states"),
    ("configs/ds_config_zero3.json", "config file"),
    ("/etc/deepspeed/hostfile", "hostfile"),
    ("/data/train.json", "A file the program needs"),  # a .json is not a config because of its suffix
    ("/ck/latest_run.txt", "A file the program needs"),
])
def test_what_a_missing_file_is_is_said_only_where_its_name_says_so(path, says):
    found = explain.explain(f"[Errno 2] No such file or directory: '{path}'\n")
    assert found.signature == "file-missing" and says in found.cause and found.params["path"] == path


@pytest.mark.parametrize("line,name", [
    ("tee: /logs/n1.log: Permission denied", "permission-denied"),
    ("tee: /logs/n1.log: 权限不够", "permission-denied"),
    ("tee: /logs/n1.log: Keine Berechtigung", "permission-denied"),
    ("PermissionError: [Errno 13] Permission denied: '/ckpt/step-5'", "permission-denied"),
    ("mkdir: cannot create directory '/models/x': Read-only file system", "read-only-fs"),
    ("touch: /models/x: 読み込み専用ファイルシステムです", "read-only-fs"),
    ("OSError: [Errno 30] Read-only file system: '/models/x/a.bin'", "read-only-fs"),
    ("bash: fork: Cannot allocate memory", "host-memory"),
    ("worker: fork: No se pudo asignar memoria", "host-memory"),
])
def test_os_error_texts_are_read_with_or_without_a_traceback(line, name):
    assert explain.explain(line + "\n").signature == name
    tb = f"Traceback (most recent call last):\n  File \"/w/t.py\", line 4, in <module>\n{line}\n"
    if ":" in line.split(" ")[0] and "Error" not in line:
        return
    found = explain.explain(tb)
    assert found.signature == name and found.error["kind"] == "python" and found.retry is False


@pytest.mark.parametrize("text,name", [
    ("cp: error writing '/ck/a.pt': 裝置上已無多餘空間\n", "disk-full"),  # extended with glibc's wordings
    ("cp: error writing '/ck/a.pt': Der zugewiesene Plattenplatz (Quota) ist überschritten\n", "disk-full"),
    ("OSError: [Errno 24] Trop de fichiers ouverts\n", "open-files-limit"),
    ("ssh: n1: Permission denied (publickey,password).\n", "ssh-publickey"),
    ("python: can't open file '/w/train.py': [Errno 2] No such file or directory\n", "script-not-found"),
    ("bash: line 1: cd: /home/u/proj: No such file or directory\n", "workdir-missing"),
    ("./a.out: error while loading shared libraries: libmpi.so.40: cannot open shared object file: No such file or "
     "directory\n", "loader-lib-missing"),
    ("/usr/bin/ld: cannot find -lcurand: No such file or directory\n", "link-lib-missing"),
    ("torchrun: command not found\n", "launcher-missing"),
])
def test_every_specific_signature_beats_the_os_texts(text, name):
    assert explain.explain(text).signature == name


def test_a_tracebacks_own_exception_stays_the_ranks_error():
    tb = "Traceback (most recent call last):\n  File \"/w/t.py\", line 9, in f\n{}\n"
    assert explain.explain(tb.format("KeyError: 'labels'")).signature == "python-error"
    # an error line elsewhere in the log does not stand in for a rank's own exception
    found = explain.explain("Error: something odd\n" + tb.format("ValueError: bad shape"))
    assert found.signature == "python-error"


# ---- the error line ---------------------------------------------------------------------------------
@pytest.mark.parametrize("line", [
    "Error: shard 3 is truncated",
    "FATAL: the token file has no header",
    "ERROR 2026-12-01 model.bin: bad magic number",
    "fatal: not a git repository (or any of the parent directories): .git",
    "trainer: cannot map the dataset into memory",
    "UnknownThingy (see above): ncclCommInitRank failed: unhandled cuda error",
    "E1201 10:00:00.123 worker.cc:88] collective failed on device 2",
    "myprog: 错误：找不到数据集",  # zh_CN
    "myprog: 錯誤：找不到資料集",  # zh_TW
    "myprog: エラー: データセットがありません",  # ja
    "myprog: Fehler: Datensatz fehlt",  # de
    "myprog: erreur : jeu de données absent",  # fr
    "myprog: error: falta el conjunto de datos",  # es
    "mytool: command not found",
    "./run.sh: 行 4: mytool: 未找到命令",
])
def test_the_first_error_line_is_quoted_when_nothing_known_is_named(line):
    found = explain.explain(f"loading 1/2\nloading 2/2\n{line}\nstep done\n")
    assert found is not None and found.signature == "error-line", (line, found)
    assert found.params["line"] == line and line in found.cause.format(**found.params)
    assert "no failure dscluster knows" in found.cause and "first error" in found.cause


@pytest.mark.parametrize("line", [
    "registered error_handler for SIGTERM",
    "validation finished: 0 errors, 0 failed",
    "errors=0 warnings=3",
    "launching with --on-error=continue --error-file /tmp/e.json",
    "UserWarning: this will be an error in a future release",
    "FutureWarning: `foo` failed to apply; falling back",
    "WARNING: cannot find a GPU config, using defaults",
    "[W socket.cpp:601] [c10d] The client socket cannot be initialized to connect",
    "[2026-12-01 10:00:00,001] [INFO] [engine.py:9] failed-step counter reset",
    "NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v8 symbol.",
    "note: error correction codes are enabled",
    "  fix: give a directory that exists",
    "[2026-12-01 10:00:02] [INFO] [launch.py:316:sigkill_handler] Killing subprocess 7",
    "['python', '-u', 't.py', '--local_rank=0'] exits with return code = 1",
    "pdsh@n0: n1: ssh exited with exit code 1",
    "srun: error: n1: task 0: Exited with exit code 1",
    "make: *** [Makefile:12: all] Error 2",
    "decode(errors='replace') keeps going",
])
def test_lines_that_only_hold_the_word_or_follow_an_error_are_never_picked(line):
    found = explain.explain(f"step 1\n{line}\nstep 2\n")
    assert found is None or found.signature != "error-line", (line, found)


def test_the_first_genuine_error_beats_the_consequences_after_it():
    text = ("[INFO] [launch.py:146:main] WORLD INFO DICT: {'n1': [0]}\n"
            "FATAL: tokenizer vocabulary size 32000 does not match the embedding (32001)\n"
            "[INFO] [launch.py:316:sigkill_handler] Killing subprocess 811\n"
            "['python', '-u', 'train.py', '--local_rank=0'] exits with return code = 1\n"
            "pdsh@n0: n1: ssh exited with exit code 1\n"
            "ERROR: the job failed\n")
    found = explain.explain(text)
    assert found.signature == "error-line" and found.params["line"].startswith("FATAL: tokenizer vocabulary")


def test_the_supervisors_own_lines_are_no_error_line():
    # launcher.log holds what dscluster's supervisor saw and did: its report of a failure is not the failure.
    text = "[dscluster 02:55:58] failure detected: rank 1 exited with code 1\n[dscluster 02:55:59] cannot restart\n"
    assert explain.explain(text) is None
    assert explain.explain(text + "Error: shard 3 is truncated\n").params["line"] == "Error: shard 3 is truncated"


def test_consequences_alone_are_no_error_line():
    text = "['python', '-u', 'train.py', '--local_rank=0'] exits with return code = 1\npdsh@n0: n1: ssh exited " \
           "with exit code 1\n"
    assert explain.explain(text) is None
    assert explain.explain("step 1 loss 3.2\nall good, 0 errors\n") is None


@pytest.mark.parametrize("line,retry,fix_says", [
    ("Error: connect to 10.0.0.5:443 timed out", True, "A restart may help"),
    ("fatal: unable to access 'https://git.example/x/': Connection refused", True, "A restart may help"),
    ("myprog: error: unrecognized option '--fast'", False, "a restart meets the same error"),
    ("mytool: command not found", False, "a restart meets the same error"),
    ("Error: shard 3 is truncated", False, "meets it again"),
])
def test_a_restart_can_help_only_when_the_line_is_of_a_kind_that_passes(line, retry, fix_says):
    found = explain.explain(line + "\n")
    assert found.signature == "error-line" and found.retry is retry and fix_says in found.fix


def test_a_quoted_line_is_escaped_and_bounded():
    hostile = "Error: bad \x1b[2J\x1b]0;owned\x07 value \u202eexe" + "x" * 5000
    found = explain.explain(f"{hostile}\n")
    assert found.signature == "error-line"
    for text in (found.params["line"], found.evidence, found.to_dict()["cause"]):
        assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
        assert "\\x1b[2J" in text
    assert len(found.params["line"]) <= 300 and len(found.evidence) <= 300


def test_a_one_megabyte_line_is_read_in_linear_time():
    line = "Error: " + "error_handler --on-error 0 errors " * 30_000
    start = time.process_time()
    found = explain.explain(line + "\n")
    assert time.process_time() - start < 5
    assert found is not None and len(found.evidence) <= 300
    start = time.process_time()
    found = explain.explain("x" * 1_000_000 + " /data/a.bin: No such file or directory\n")
    assert found.signature == "file-missing" and found.params["path"] == "/data/a.bin"
    assert time.process_time() - start < 5
