"""The hub's proxy (node/hubproxy.py, the Python configurable-http-proxy) carries a notebook's kernel socket as
JupyterLab needs it: the browser is told the subprotocol the person's server selected (as the package comes,
the server spoke `v1.kernel.websocket.jupyter.org` and the browser the legacy protocol, and a notebook's cell
waited for ever: the team journey's notebook), and a socket the server closes is closed towards the browser,
which then reconnects; a binary frame stays binary (the package sent it on as text). The real proxy in its own process, a real tornado websocket server behind it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

pytest.importorskip("configurable_http_proxy")
tornado_web = pytest.importorskip("tornado.web")
from tornado.httpclient import HTTPRequest  # noqa: E402
from tornado.websocket import WebSocketHandler, websocket_connect  # noqa: E402

KERNEL_PROTOCOL = "v1.kernel.websocket.jupyter.org"


class Upstream(WebSocketHandler):
    """As jupyter_server's kernel channels: selects v1 when offered, answers each message, closes on 'bye'."""

    def select_subprotocol(self, subprotocols):
        return KERNEL_PROTOCOL if KERNEL_PROTOCOL in subprotocols else None

    def on_message(self, message):
        kind = "binary" if isinstance(message, bytes) else "text"
        text = message.decode() if isinstance(message, bytes) else message
        self.write_message(f"{self.selected_subprotocol}:{kind}:{text}")
        if text == "bye":
            self.close()


def _free_ports(n: int) -> list[int]:
    import socket

    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


async def _through_the_proxy() -> tuple[str | None, list]:
    upstream_port, public, api = _free_ports(3)
    server = tornado_web.Application([(r"/user/x/ws", Upstream)]).listen(upstream_port, "127.0.0.1")
    proxy = subprocess.Popen([sys.executable, "-m", "dscluster.node.hubproxy", "--ip", "127.0.0.1", "--port", str(public),
                              "--api-ip", "127.0.0.1", "--api-port", str(api),
                              "--default-target", f"http://127.0.0.1:{upstream_port}"],
                             env={**os.environ, "CONFIGPROXY_AUTH_TOKEN": "t"}, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        client = None
        for _ in range(300):  # the proxy listens within seconds (a busy machine: up to a minute)
            try:
                client = await websocket_connect(HTTPRequest(f"ws://127.0.0.1:{public}/user/x/ws"),
                                                 subprotocols=[KERNEL_PROTOCOL])
                break
            except OSError:
                await asyncio.sleep(0.2)
        assert client is not None, "the proxy never listened"
        await client.write_message(b"execute", binary=True)  # the v1 protocol's frames are binary
        got = [await asyncio.wait_for(client.read_message(), 30)]
        await client.write_message("bye")
        got.append(await asyncio.wait_for(client.read_message(), 30))
        got.append(await asyncio.wait_for(client.read_message(), 30))  # None: closed, as the server closed it
        return client.selected_subprotocol, got
    finally:
        proxy.terminate()
        proxy.wait(timeout=30)
        server.stop()


def test_the_browser_speaks_the_kernel_protocol_the_server_selected_and_sees_it_close():
    selected, got = asyncio.run(_through_the_proxy())
    assert selected == KERNEL_PROTOCOL  # before: None, and JupyterLab spoke the legacy protocol to a v1 server
    # before: the binary frame arrived as text (the server's v1 reader failed on it), and no None, ever
    assert got == [f"{KERNEL_PROTOCOL}:binary:execute", f"{KERNEL_PROTOCOL}:text:bye", None], got
