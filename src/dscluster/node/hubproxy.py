"""JupyterHub's proxy: the Python `configurable-http-proxy` (no Node.js on the master), with TLS on its
public port for `dscluster hub start --public`.

That package takes `--ssl-key`/`--ssl-cert` but does not serve TLS yet (it refuses them). This entry
point takes those two options itself and serves the public port with them (TLS 1.2 or newer); the
proxy's API stays plain HTTP on 127.0.0.1, as JupyterHub's own API. Everything else is the package's
own command line, unchanged, and its token comes from the environment (CONFIGPROXY_AUTH_TOKEN), never
from argv.

Its websockets are mended (`mend_websockets`): as the package comes, a notebook's kernel never answers
through it. It connects to the person's JupyterLab with the browser's Sec-WebSocket-Protocol offer, so
the server picks its kernel protocol (`v1.kernel.websocket.jupyter.org`), but it answers the browser with
no protocol, so JupyterLab speaks the legacy one: neither side understands the other, and the cell waits
for ever. It also passed the browser's binary frames (the v1 protocol's) on as text frames, which the
server cannot read. And a socket the server closed stayed open towards the browser, which then sent into
nothing instead of reconnecting.
"""

from __future__ import annotations

import ssl
import sys


def split_tls(argv: list[str]) -> tuple[str | None, str | None, list[str]]:
    """(cert, key, the rest of argv): `--ssl-cert X`/`--ssl-key Y` (or `=`-joined) taken out. Pure."""
    found: dict[str, str] = {}
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if name in ("--ssl-cert", "--ssl-key"):
            if not eq:
                i += 1
                value = argv[i] if i < len(argv) else ""
            found[name] = value
        else:
            rest.append(arg)
        i += 1
    return found.get("--ssl-cert"), found.get("--ssl-key"), rest


def tls_context(cert: str, key: str | None) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    return context


def mend_websockets(handler_cls) -> None:
    """The package's ProxyHandler, mended: the browser gets the subprotocol the upstream server selected (the
    package connects upstream first, with the browser's offer), its binary frames reach the server as binary
    frames, and when either side closes, so does the other (the browser then reconnects, and JupyterLab's server replays what it buffered)."""
    from tornado.websocket import WebSocketClosedError  # noqa: PLC0415

    start = handler_cls.start_ws_client

    def select_subprotocol(self, subprotocols):
        chosen = getattr(self.ws_client, "selected_subprotocol", None)
        return chosen if chosen in subprotocols else None

    async def start_ws_client(self, path=None):
        await start(self, path)
        client = self.ws_client
        passed_on = getattr(client, "_on_message_callback", None)
        if client is None or passed_on is None:
            return

        def from_upstream(message):
            passed_on(message)
            if message is None and not self.closed:  # the server closed its socket: close the browser's too
                self.close()

        client._on_message_callback = from_upstream

    def on_message(self, message):
        client = self.ws_client
        if client is None:  # the server's side is gone: the browser must reconnect, not send into nothing
            self.close()
            return
        prefix = self.target["prefix"] if self.target else ""
        if prefix:
            self.proxy.update_last_activity(prefix)
        try:  # a binary frame stays binary (the package sent it on as text, which the v1 protocol cannot read)
            client.write_message(message, binary=isinstance(message, bytes))
        except WebSocketClosedError:
            self.close()

    handler_cls.select_subprotocol = select_subprotocol
    handler_cls.start_ws_client = start_ws_client
    handler_cls.on_message = on_message


def main(argv: list[str] | None = None) -> int:
    from configurable_http_proxy import cli, handlers  # noqa: PLC0415 - the hub extra's

    mend_websockets(handlers.ProxyHandler)

    cert, key, rest = split_tls(list(sys.argv[1:] if argv is None else argv))
    if cert:
        context = tls_context(cert, key)
        plain = cli.HTTPServer
        made: list[object] = []

        def server(app, **kwargs):
            # The package makes the public server first, then the API's: only the first one gets TLS.
            if not made:
                kwargs["ssl_options"] = context
            made.append(app)
            return plain(app, **kwargs)

        cli.HTTPServer = server
    sys.argv = ["configurable-http-proxy", *rest]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main())
