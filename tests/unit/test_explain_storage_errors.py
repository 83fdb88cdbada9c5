"""The storage's own error texts (session 28, issue 45; no corpus round): the C library's EIO, ESTALE and ENOTCONN on a
named path, in CPython's `[Errno N] TEXT: 'PATH'` and a C program's `'PATH': TEXT` (any language strerror.py has), read
as the storage's failure (sigstorage.py), and torch's own `write(): fd N failed with TEXT` as a failed write
(write-failed, whose disk the supervisor then looks at). Near misses: the same errno without a path (a socket's
ENOTCONN, print() to a terminal that went away) is not the storage's."""

import pytest
from explain_rounds import FAILURES_ZH, sig

from dscluster import explain

TB = 'Traceback (most recent call last):\n  File "/w/train.py", line 9, in <module>\n    {code}\n{error}\n'


@pytest.mark.parametrize("text,expected", [
    # CPython (Objects/exceptions.c, OSError_str) on a file op; glibc's strerror(EIO)
    (TB.format(code="f.write(b)", error="OSError: [Errno 5] Input/output error: '/nfs/out/log.txt'"), "storage-io-error"),
    # coreutils' cp and ls, in English and in zh_CN's and zh_TW's catalogs (glibc's po: 输入/输出错误, 輸入/輸出錯誤)
    ("cp: error reading '/lustre/data/shard.bin': Input/output error\n", "storage-io-error"),
    ("ls: 无法访问 '/mnt/x': 输入/输出错误\n", "storage-io-error"),
    ("ls: 無法存取 '/mnt/x': 輸入/輸出錯誤\n", "storage-io-error"),
    # ESTALE: CPython's, glibc's current strerror and before 2.18 ("Stale NFS file handle"), from tar
    (TB.format(code="shutil.rmtree(d)", error="OSError: [Errno 116] Stale file handle: '/nfs/ckpt/global_step10'"),
     "nfs-stale-handle"),
    ("tar: /nfs/home/u/run: Stale NFS file handle\n", "nfs-stale-handle"),
    # ENOTCONN on a FUSE path: CPython's open() and coreutils' ls
    (TB.format(code="open(p).read()", error="OSError: [Errno 107] Transport endpoint is not connected: '/mnt/s3/a.bin'"),
     "fuse-mount-gone"),
    ("ls: cannot access '/mnt/data': Transport endpoint is not connected\n", "fuse-mount-gone"),
    # torch/csrc/serialization.cpp doWrite's own words, with the kernel's error
    (TB.format(code="torch.save(sd, p)", error="RuntimeError: write(): fd 29 failed with Input/output error"),
     "write-failed"),
])
def test_the_storages_words(text, expected):
    assert sig(text) == expected


@pytest.mark.parametrize("text,not_expected", [
    # print() to a terminal (or a pipe's pty) that went away: EIO with no path is not the storage's
    (TB.format(code="print(loss)", error="OSError: [Errno 5] Input/output error"), "storage-io-error"),
    # a socket's ENOTCONN (socket.shutdown on a connection already closed) names no path
    (TB.format(code="s.shutdown(socket.SHUT_RDWR)", error="OSError: [Errno 107] Transport endpoint is not connected"),
     "fuse-mount-gone"),
    # git's and pip's "stale" words are not NFS's handle
    ("fatal: Unable to create '/repo/.git/index.lock': File exists. Another git process seems to be running; remove "
     "the stale lock file\n", "nfs-stale-handle"),
    # a write that reports no space is the disk's (disk-full, before it), not a generic failed write
    (TB.format(code="torch.save(sd, p)", error="RuntimeError: write(): fd 29 failed with No space left on device"),
     "write-failed"),
])
def test_near_misses(text, not_expected):
    assert sig(text) != not_expected


def test_each_has_its_texts_its_log_and_its_restart():
    by_name = {s.name: s for s in explain.SIGNATURES}
    # write-failed offers no restart either since session 28 (pytorch#10577: the disk was full; the supervisor names a
    # full disk itself, with its figures, before this answer is given)
    for name, retry in (("storage-io-error", False), ("nfs-stale-handle", False), ("fuse-mount-gone", False),
                        ("write-failed", False)):
        s = by_name[name]
        assert s.cause in FAILURES_ZH or name == "write-failed", name  # write-failed's texts are in launch.json
        assert s.fix in FAILURES_ZH or name == "write-failed", name
        assert s.retry is retry, name
