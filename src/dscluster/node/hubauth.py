"""The hub's authenticator, loaded by JupyterHub itself (`JupyterHub.authenticator_class`): a person logs
in with the password `dscluster user add` printed once, checked against the salted hashes of the hub's
0600 password file (node/hubpass.py). No PAM (the accounts have no password), no internet."""

from __future__ import annotations

from jupyterhub.auth import Authenticator
from traitlets import Unicode

from dscluster.node import hubpass


class DsclusterAuthenticator(Authenticator):
    """Name + the hub's own password for that name; anyone without one is refused."""

    password_file = Unicode("", config=True, help="the hub's password file (0600, in its 0700 state directory)")

    async def authenticate(self, handler, data):
        name = self.normalize_username(str((data or {}).get("username") or ""))
        password = str((data or {}).get("password") or "")
        if not name or not password:
            return None
        from pathlib import Path  # noqa: PLC0415

        if hubpass.check(name, password, Path(self.password_file) if self.password_file else None):
            return name
        self.log.warning("dscluster: failed login for %r", name)  # the name only, never what was typed
        return None
