"""JupyterHub's proxy: the Python `configurable-http-proxy` (no Node.js on the master), with TLS on its
public port for `dscluster hub start --public`.

That package takes `--ssl-key`/`--ssl-cert` but does not serve TLS yet (it refuses them). This entry
point takes those two options itself and serves the public port with them (TLS 1.2 or newer); the
proxy's API stays plain HTTP on 127.0.0.1, as JupyterHub's own API. Everything else is the package's
own command line, unchanged, and its token comes from the environment (CONFIGPROXY_AUTH_TOKEN), never
from argv.
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


def main(argv: list[str] | None = None) -> int:
    from configurable_http_proxy import cli  # noqa: PLC0415 - the hub extra's

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
