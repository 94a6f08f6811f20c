"""OAUTHBEARER tokens: from an environment variable or a command, refreshed, never shown.

::

    security:
      protocol: SASL_SSL
      sasl: {mechanism: OAUTHBEARER, tokenCommand: [gcloud, auth, print-access-token]}

``TokenSource.token()`` is what kafka-python's token provider returns each time a connection
authenticates. A command's token is reused until it is ``tokenRefreshSeconds`` old or, for a
JWT, until a minute before its ``exp``; then the command runs again (no shell, 30 s at most,
from an empty temporary folder outside the repository: a pull request's ``./get-token.sh``
or a package ``python3 -m`` would find first in the cluster folder is never what runs; the
program is one on PATH or an absolute path, and a script inside the repository counts by
its content as a connection setting, ``commands/_gitbase.connection_contents``). A variable
is read again on every call. A failing command is a ``ClusterAuthError`` naming the
setting, the command and its exit status, never what the command printed (a credential
helper's output may be a credential). No kafka import here: the adapter wraps this in
kafka-python's ``AbstractTokenProvider`` (``bootstrap.py``).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence

from kgitops.errors import ClusterAuthError, remember_secrets

COMMAND_TIMEOUT_SECONDS = 30.0
EXPIRY_MARGIN_SECONDS = 60.0


def jwt_expiry(token: str) -> float | None:
    """The ``exp`` (epoch seconds) of a JWT, or None for a token that is not one."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    payload = parts[1] + "=" * (-len(parts[1]) % 4)
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload.encode("ascii")))
    except (ValueError, binascii.Error, UnicodeError):
        return None
    exp = claims.get("exp") if isinstance(claims, dict) else None
    return float(exp) if isinstance(exp, int | float) and not isinstance(exp, bool) else None


class TokenSource:
    """Where the bearer token comes from (exactly one of ``env_name`` / ``command``)."""

    def __init__(
        self,
        *,
        env_name: str | None = None,
        command: Sequence[str] | None = None,
        refresh_seconds: float = 300.0,
        where: str = "security.sasl",
        cwd: str | None = None,
        environ: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        if (env_name is None) == (command is None):
            raise ValueError("a TokenSource needs exactly one of env_name or command")
        self._env_name = env_name
        self._command = tuple(command) if command is not None else None
        self._refresh = float(refresh_seconds)
        self._where = where
        self._cwd = cwd
        self._environ = os.environ if environ is None else environ
        self._clock = clock
        self._wall = wall_clock
        self._token: str | None = None
        self._fetched = 0.0
        self._seen: list[str] = []

    def __repr__(self) -> str:
        what = f"${self._env_name}" if self._env_name else " ".join(self._command or ())
        return f"TokenSource({what})"

    @property
    def seen(self) -> tuple[str, ...]:
        """Every token handed out so far: what error messages are scrubbed of."""
        return tuple(self._seen)

    def token(self) -> str:
        if self._env_name is not None:
            value = self._environ.get(self._env_name, "").strip()
            if not value:
                raise ClusterAuthError(
                    f"{self._where}: the environment variable {self._env_name} (tokenEnv in "
                    "cluster.yaml) is not set; export the bearer token before running kgitops"
                )
            return self._remember(value)
        if self._token is None or self._stale():
            self._token = self._remember(self._run())
            self._fetched = self._clock()
        return self._token

    def _stale(self) -> bool:
        assert self._token is not None
        if self._clock() - self._fetched >= self._refresh:
            return True
        exp = jwt_expiry(self._token)
        return exp is not None and exp - self._wall() <= EXPIRY_MARGIN_SECONDS

    def _remember(self, value: str) -> str:
        if value not in self._seen:
            self._seen.append(value)
        remember_secrets([value])
        return value

    def _exec(self, cwd: str) -> subprocess.CompletedProcess[str]:
        assert self._command is not None
        return subprocess.run(
            self._command,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_SECONDS,
            check=False,
        )

    def _run(self) -> str:
        assert self._command is not None
        shown = " ".join(self._command)
        try:
            with tempfile.TemporaryDirectory(prefix="kgitops-token-") as empty:
                done = self._exec(self._cwd or empty)
        except FileNotFoundError:
            raise ClusterAuthError(
                f"{self._where}: tokenCommand `{shown}`: no such program {self._command[0]!r}"
            ) from None
        except subprocess.TimeoutExpired:
            raise ClusterAuthError(
                f"{self._where}: tokenCommand `{shown}` gave no token within "
                f"{COMMAND_TIMEOUT_SECONDS:.0f} s"
            ) from None
        except OSError as exc:
            raise ClusterAuthError(
                f"{self._where}: tokenCommand `{shown}` could not run: {exc.strerror or exc}"
            ) from None
        token = done.stdout.strip()
        if done.returncode != 0 or not token or len(token.split()) != 1:
            # Never its output: what a failing credential helper prints (stdout or stderr)
            # may be a credential, and this message can reach a pull-request comment.
            why = (
                f"exited with status {done.returncode}"
                if done.returncode != 0
                else "printed no single token on its standard output"
            )
            raise ClusterAuthError(
                f"{self._where}: security.sasl.tokenCommand `{shown}` {why} (its output is "
                "not shown, as it may hold a credential: run the command yourself to see why)"
            )
        return token
