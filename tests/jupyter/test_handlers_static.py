"""Every dscluster HTTP handler method is behind authentication and authorization (fail closed),
checked on the URL table itself so a new endpoint cannot forget it."""

from __future__ import annotations

import pytest

pytest.importorskip("jupyter_server")

import tornado.web  # noqa: E402
from jupyter_server.auth.decorator import authorized  # noqa: E402
from jupyter_server.base.handlers import APIHandler  # noqa: E402

from dscluster.jupyter import handlers  # noqa: E402

HTTP_METHODS = ("get", "post", "put", "patch", "delete")


def _probe():
    pass


# The wrappers keep the wrapped name (functools.wraps), so recognise them by their code objects.
AUTHENTICATED_CODE = tornado.web.authenticated(_probe).__code__
AUTHORIZED_CODE = authorized("read")(_probe).__code__


def test_every_route_method_is_authenticated_and_authorized():
    checked = 0
    for _pattern, cls in [*handlers.ROUTES, handlers.FALLBACK]:
        assert issubclass(cls, APIHandler)
        for name in HTTP_METHODS:
            method = cls.__dict__.get(name)
            if method is None or (name != "get" and method is cls.__dict__.get("get")):
                continue
            # tornado.web.authenticated is outermost; jupyter_server's @authorized is inside it.
            assert method.__code__ is AUTHENTICATED_CODE, (cls.__name__, name)
            assert method.__wrapped__.__code__ is AUTHORIZED_CODE, (cls.__name__, name)
            checked += 1
    assert checked >= len(handlers.ROUTES)


def test_extension_points_name_the_module():
    import dscluster.jupyter as ext

    assert ext._jupyter_server_extension_points() == [{"module": "dscluster.jupyter"}]
