"""Typed errors, caught once at the CLI / API / HTTP boundary.

Every error carries a message (what is wrong, naming the setting) and a hint (the fix). The
boundary prints both without a traceback; `--debug` (or DSCLUSTER_DEBUG=1) shows the traceback.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Stable exit codes; scripts and the JupyterLab panel rely on them."""

    OK = 0
    FAILURE = 1  # the job or check itself failed
    USAGE = 2  # bad CLI arguments (argparse uses 2 too)
    CONFIG = 3  # a config, spec, hostfile or data setting is invalid
    CLUSTER = 4  # a node is unreachable or unhealthy
    RUN = 5  # a run failed or cannot be found
    PERMISSION = 6  # needs root, or a path is not writable
    NOT_OWNER = 7  # stop/restart of a run another user owns (runs/records/owner.py)
    GPUS_BUSY = 8  # a launch whose GPUs another run holds (runs/leases/leasing.py; --wait queues it instead)
    INTERRUPTED = 130


class DsclusterError(Exception):
    """Base class: a message naming what is wrong, and a hint naming the fix."""

    exit_code: ExitCode = ExitCode.FAILURE

    def __init__(self, message: str, hint: str | None = None, *, setting: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.setting = setting

    def to_dict(self) -> dict:
        return {"error": type(self).__name__, "message": self.message, "hint": self.hint, "setting": self.setting}

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  fix: {self.hint}"


class UsageError(DsclusterError):
    exit_code = ExitCode.USAGE


class ConfigError(DsclusterError):
    """A ds_config, cluster spec, trainer option or data setting is invalid."""

    exit_code = ExitCode.CONFIG


class HostfileError(ConfigError):
    """A hostfile line breaks DeepSpeed's rules or ours. `line` is 1-based."""

    def __init__(self, message: str, hint: str | None = None, *, path: str | None = None, line: int | None = None):
        where = f"{path}:{line}: " if path and line else (f"{path}: " if path else "")
        super().__init__(where + message, hint, setting="hostfile")
        self.path = path
        self.line = line


class DataError(ConfigError):
    """A data directory, corpus or tokenizer is missing or malformed."""


class ClusterError(DsclusterError):
    """A node cannot be reached or is not in the state a command needs."""

    exit_code = ExitCode.CLUSTER

    def __init__(self, message: str, hint: str | None = None, *, node: str | None = None, **kw):
        super().__init__(message, hint, **kw)
        self.node = node


class CommandError(ClusterError):
    """A command run through a Runner failed; carries its return code and output tail."""

    def __init__(self, message: str, hint: str | None = None, *, node: str | None = None,
                 argv: list[str] | None = None, returncode: int | None = None, stderr: str = ""):
        super().__init__(message, hint, node=node)
        self.argv = argv
        self.returncode = returncode
        self.stderr = stderr


class RunError(DsclusterError):
    """A run is unknown, already finished, or failed."""

    exit_code = ExitCode.RUN


class PermissionNeeded(DsclusterError):
    """Needs root (network namespaces) or a writable path."""

    exit_code = ExitCode.PERMISSION


class NotOwner(DsclusterError):
    """Stopping or restarting a run another user started: only its owner (or root) may (HTTP 403)."""

    exit_code = ExitCode.NOT_OWNER
    http_status = 403


class GpusBusy(DsclusterError):
    """A launch whose GPUs a live run holds (HTTP 409): refused before anything starts, or queued with --wait."""

    exit_code = ExitCode.GPUS_BUSY
    http_status = 409


class EnvironmentProblem(DsclusterError):
    """A file or folder the request needs cannot be used (permissions, a missing path, a full disk): not
    a bug of dscluster, so the person gets the cause and the fix, never an opaque internal error (HTTP 409)."""

    exit_code = ExitCode.PERMISSION
    http_status = 409


def from_os_error(err: OSError) -> DsclusterError:
    """An OSError that reached a boundary (the CLI, the panel's API, the notebook API) as the typed error a
    person can act on: what could not be used, as whom, and the fix, in their language."""
    import errno  # noqa: PLC0415
    import getpass  # noqa: PLC0415

    from dscluster.i18n import tr  # noqa: PLC0415 - errors is imported by everything, i18n below nothing

    path = err.filename
    if path is None:  # a descriptor's or a socket's error names no path
        return _os_error_without_path(err, tr)
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "?"
    if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return EnvironmentProblem(
            tr("permission denied: {user} may not use {path}", user=user, path=path),
            tr("see who owns it: ls -ld {path}; work in a folder of your own (on the cluster: <shared>/users/{user}), "
               "or ask the cluster's admin to run `dscluster up` (or `sim up`) again, which makes the shared "
               "folders right", path=path, user=user), setting="path")
    if err.errno == errno.ENOENT:
        return EnvironmentProblem(tr("{path} does not exist", path=path),
                                  tr("check the path (relative paths start at the launch directory)"), setting="path")
    if err.errno in (errno.ENOSPC, errno.EDQUOT):
        return EnvironmentProblem(tr("no space left where {path} is written", path=path),
                                  tr("free space there (old runs and checkpoints), then try again"), setting="path")
    return EnvironmentProblem(tr("{path}: {reason}", path=path, reason=err.strerror or str(err)),
                              tr("check the path and its permissions, then try again"), setting="path")


def _os_error_without_path(err: OSError, tr) -> DsclusterError:
    """from_os_error's answer when the error names no path (a write through a descriptor, a socket)."""
    import errno  # noqa: PLC0415

    if err.errno in (errno.ENOSPC, errno.EDQUOT):
        return EnvironmentProblem(tr("no space left on a device dscluster writes to"),
                                  tr("free space (df -h; old runs and checkpoints), then try again"), setting="path")
    if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return EnvironmentProblem(tr("permission denied: {reason}", reason=err.strerror or str(err)),
                                  tr("run again with --debug to see which file, then check its owner: ls -ld FILE"),
                                  setting="path")
    return EnvironmentProblem(tr("{reason}", reason=err.strerror or str(err)),
                              tr("run again with --debug to see the traceback"))


def os_error_names_path(err: OSError) -> bool:
    """Whether the CLI's boundary turns this OSError into a person's message (a path, or a disk or permission
    problem) rather than an unexpected error (a connection refused is the command's own to explain)."""
    import errno  # noqa: PLC0415

    return err.filename is not None or err.errno in (errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM,
                                                      errno.EROFS)
