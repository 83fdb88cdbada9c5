"""REST handlers under /dscluster/api/ (Jupyter Server extension).

Security: every handler subclasses APIHandler and every method carries @tornado.web.authenticated
and @authorized, so a request without a valid token or session gets 403 JSON (fail closed even when
`allow_unauthenticated_access` is left at its default). POSTs additionally need the XSRF token
(JupyterLab sends it) or token auth in the Authorization header. Launch starts the detached
supervisor (`dscluster.runs.service.launch`) in a worker thread; nothing trains inside the server.

Errors: a typed DsclusterError becomes 4xx JSON {error, message, hint, setting}, and so does an OSError
(a folder the person may not write, a missing path, a full disk: `errors.from_os_error` names it and the
fix, in the sender's language); anything else is logged server side with its traceback and answered with
a 500 JSON that names the exception but carries no traceback.
"""

from __future__ import annotations

import asyncio
import json
import traceback
from functools import wraps
from typing import Any

import tornado.web
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join

from dscluster.errors import ConfigError, DsclusterError, UsageError, from_os_error
from dscluster.i18n import tr, use_language
from dscluster.jupyter import clusterview, launching, rundata
from dscluster.runs import service
from dscluster.runs.leases import leasing
from dscluster.runs.records import owner

API_PREFIX = "dscluster/api"
_STATUS_BY_ERROR = ((rundata.NotFound, 404), (UsageError, 400), (ConfigError, 400))
# The panel names its JupyterLab language here (zh-TW, en...) so messages come back in it.
LANGUAGE_HEADER = "X-Dscluster-Lang"


def _status_for(exc: DsclusterError) -> int:
    for cls, status in _STATUS_BY_ERROR:
        if isinstance(exc, cls):
            return status
    return getattr(exc, "http_status", 409)  # a valid request the cluster cannot carry out now


def json_errors(method):
    """Turn typed errors into JSON answers; never let a traceback reach the client."""

    @wraps(method)
    async def inner(self: DsclusterHandler, *args, **kwargs):
        # Answer in the language of the sender's JupyterLab (the panel sends it), else the server's.
        with use_language(self.request.headers.get(LANGUAGE_HEADER)):
            try:
                return await method(self, *args, **kwargs)
            except tornado.web.HTTPError:
                raise
            except DsclusterError as exc:
                self.send_error_json(_status_for(exc), exc.to_dict())
            except OSError as exc:  # the environment (a folder's owner, a full disk), not a bug: say which
                self.log.warning("dscluster API: %s %s\n%s", self.request.method, self.request.path,
                                 traceback.format_exc())
                err = from_os_error(exc)
                self.send_error_json(_status_for(err), err.to_dict())
            except Exception as exc:
                self.log.error("dscluster API error on %s %s\n%s", self.request.method, self.request.path,
                               traceback.format_exc())
                cause = f"{type(exc).__name__}: {str(exc)[:300]}"
                self.send_error_json(500, {"error": "InternalError",
                                           "message": tr("internal error in the dscluster extension ({cause})",
                                                         cause=cause),
                                           "hint": tr("see the Jupyter server log for details"), "setting": None})

    return inner


class DsclusterHandler(APIHandler):
    auth_resource = "dscluster"

    @property
    def sampler(self) -> clusterview.NodeSampler:
        return self.settings["dscluster_sampler"]

    def cluster(self) -> clusterview.ClusterView:
        return clusterview.resolve(self.get_query_argument("cluster", None) or None)

    def runs_dirs(self):
        return self.cluster().runs_dirs()

    def run_ref(self, run_id: str) -> rundata.RunRef:
        return rundata.find_run(self.runs_dirs(), run_id)

    def offset_arg(self, name: str = "offset", default: int | None = 0) -> int | None:
        raw = self.get_query_argument(name, None)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw)
        except ValueError:
            value = -2
        if value < -1 or value > 2**62:  # beyond any file; larger would not fit a seek
            raise UsageError(tr("query parameter {name!r} must be a byte offset >= 0, got {raw!r}",
                                name=name, raw=raw[:40]), tr("use the offset the previous answer returned"),
                             setting=name)
        return value

    def root_dir(self) -> str | None:
        return self.settings.get("server_root_dir")

    def json_body(self) -> dict:
        try:
            body = json.loads(self.request.body or b"{}")
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise UsageError(tr("request body is not valid JSON: {err}", err=str(exc)[:200]),
                             tr("send a JSON object"), setting="body") from None
        if not isinstance(body, dict):
            raise UsageError(tr("request body must be a JSON object"), tr("send a JSON object"), setting="body")
        return body

    def send_json(self, obj: Any, status: int = 200) -> None:
        self.set_status(status)
        self.set_header("Content-Type", "application/json")
        self.set_header("Cache-Control", "no-store")
        self.finish(json.dumps(obj, default=str))

    def send_error_json(self, status: int, payload: dict) -> None:
        self.clear()
        self.send_json(payload, status)

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = (kwargs.get("exc_info") or (None, None, None))[1]
        message = getattr(exc, "log_message", None) or self._reason
        hint = None
        # Raised before json_errors sets the sender's language (authentication, method): set it here too.
        with use_language(self.request.headers.get(LANGUAGE_HEADER)):
            if status_code == 403:
                hint = tr("log in to JupyterLab with its token, or send the header 'Authorization: token <token>'; "
                          "POSTs from a browser session also need the _xsrf token")
            elif status_code == 405:
                allowed = [m for m in ("GET", "POST") if type(self).__dict__.get(m.lower())]
                hint = tr("this endpoint accepts: {methods}", methods=", ".join(allowed) or "-")
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({"error": "HTTPError", "message": message, "hint": hint, "setting": None,
                                "status": status_code}))


class ClusterHandler(DsclusterHandler):
    @tornado.web.authenticated
    @authorized("read")
    @json_errors
    async def get(self):
        view = self.cluster()
        data = await asyncio.to_thread(clusterview.describe, view, self.sampler)
        self.send_json(data)


class DefaultsHandler(DsclusterHandler):
    @tornado.web.authenticated
    @authorized("read")
    @json_errors
    async def get(self):
        self.send_json(launching.form_defaults(self.cluster()))


class RunsHandler(DsclusterHandler):
    @tornado.web.authenticated
    @authorized("read")
    @json_errors
    async def get(self):
        dirs = self.runs_dirs()
        runs = await asyncio.to_thread(rundata.list_runs, dirs)
        self.send_json({"runs": runs, "me": owner.current_user(), "admin": owner.is_admin()})

    @tornado.web.authenticated
    @authorized("execute")
    @json_errors
    async def post(self):
        request = launching.parse_launch(self.json_body(), cwd=self.root_dir())
        run_id = await asyncio.to_thread(service.launch, request)
        self.send_json({"id": run_id}, status=201)


class QueueHandler(DsclusterHandler):
    """The GPUs runs hold and the runs queued for them (`dscluster queue`)."""

    @tornado.web.authenticated
    @authorized("read")
    @json_errors
    async def get(self):
        shared = [d.parent for d in self.runs_dirs()]
        held = await asyncio.to_thread(lambda: leasing.board(leasing.places(shared)).to_json())
        self.send_json({**held, "me": owner.current_user()})


class ValidateHandler(DsclusterHandler):
    @tornado.web.authenticated
    @authorized("read")
    @json_errors
    async def post(self):
        request = launching.parse_launch(self.json_body(), cwd=self.root_dir())
        prepared = await asyncio.to_thread(service.prepare_request, request)
        ds = prepared.record.ds_config or {}
        self.send_json({"ok": True, "world_size": prepared.record.world_size,
                        "train_batch_size": ds.get("train_batch_size"), "cluster": prepared.record.cluster})


class RunHandler(DsclusterHandler):
    @tornado.web.authenticated
    @authorized("read")
    @json_errors
    async def get(self, run_id: str):
        ref = self.run_ref(run_id)
        typed = rundata.record_of(ref)
        summary = rundata.summary(ref, typed)
        record = rundata.run_record(ref, typed)
        record = {**record, "explanation": rundata.shown_explanation(record.get("explanation"))}
        self.send_json({"run": record, "summary": summary, "logs": rundata.log_files(ref)})


class EventsHandler(DsclusterHandler):
    @tornado.web.authenticated
    @authorized("read")
    @json_errors
    async def get(self, run_id: str):
        self.send_json(rundata.events(self.run_ref(run_id), self.offset_arg()))


class MetricsHandler(DsclusterHandler):
    @tornado.web.authenticated
    @authorized("read")
    @json_errors
    async def get(self, run_id: str):
        limit = self.offset_arg("max", default=None)
        if limit is not None and limit < 1:
            raise UsageError(tr("query parameter 'max' must be a number of records >= 1"), tr("e.g. max=500"),
                             setting="max")
        self.send_json(rundata.metrics(self.run_ref(run_id), self.offset_arg(), max_records=limit or None))


class LogsHandler(DsclusterHandler):
    @tornado.web.authenticated
    @authorized("read")
    @json_errors
    async def get(self, run_id: str):
        self.send_json({"logs": rundata.log_files(self.run_ref(run_id))})


class LogTailHandler(DsclusterHandler):
    @tornado.web.authenticated
    @authorized("read")
    @json_errors
    async def get(self, run_id: str, name: str):
        ref = self.run_ref(run_id)
        self.send_json(rundata.log_tail(ref, name, self.offset_arg(default=None)))


class CheckpointsHandler(DsclusterHandler):
    @tornado.web.authenticated
    @authorized("read")
    @json_errors
    async def get(self, run_id: str):
        self.send_json({"checkpoints": rundata.checkpoints(self.run_ref(run_id))})


class StopHandler(DsclusterHandler):
    @tornado.web.authenticated
    @authorized("execute")
    @json_errors
    async def post(self, run_id: str):
        ref = self.run_ref(run_id)
        result = await asyncio.to_thread(service.stop, ref.path)
        self.send_json(result, status=202)


class RestartHandler(DsclusterHandler):
    @tornado.web.authenticated
    @authorized("execute")
    @json_errors
    async def post(self, run_id: str):
        ref = self.run_ref(run_id)
        env = launching.checked_env(self.json_body().get("env"))  # secret values again: never recorded
        new_id = await asyncio.to_thread(service.restart, ref.path, env)
        self.send_json({"id": new_id, "restarted_from": run_id}, status=201)


class NotFoundHandler(DsclusterHandler):
    """Any other path under /dscluster/api/: a 404 JSON (after auth), never Jupyter's HTML page."""

    @tornado.web.authenticated
    @authorized("read")
    @json_errors
    async def get(self, path: str):
        raise rundata.NotFound(tr("no endpoint /dscluster/api/{path}", path=path[:100]),
                               tr("see the endpoint list in dscluster/jupyter/handlers.py"), setting="path")

    post = get


_RUN = r"(?P<run_id>[^/]+)"
ROUTES = [
    (r"cluster", ClusterHandler),
    (r"defaults", DefaultsHandler),
    (r"validate", ValidateHandler),
    (r"runs", RunsHandler),
    (r"queue", QueueHandler),
    (rf"runs/{_RUN}", RunHandler),
    (rf"runs/{_RUN}/events", EventsHandler),
    (rf"runs/{_RUN}/metrics", MetricsHandler),
    (rf"runs/{_RUN}/logs", LogsHandler),
    (rf"runs/{_RUN}/logs/(?P<name>.+)", LogTailHandler),
    (rf"runs/{_RUN}/checkpoints", CheckpointsHandler),
    (rf"runs/{_RUN}/stop", StopHandler),
    (rf"runs/{_RUN}/restart", RestartHandler),
]
FALLBACK = (r"(?P<path>.*)", NotFoundHandler)  # registered last: tornado takes the first match


def setup_handlers(web_app) -> None:
    base_url = web_app.settings["base_url"]
    web_app.settings.setdefault("dscluster_sampler", clusterview.NodeSampler())
    handlers = [(url_path_join(base_url, API_PREFIX, pattern) + "/?$", cls) for pattern, cls in [*ROUTES, FALLBACK]]
    web_app.add_handlers(".*$", handlers)
