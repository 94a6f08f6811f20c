"""``admin.env``, the local Kafka cluster's secrets (``kgitops.cluster.kafka.localcluster``),
made at ``up``, mode 0600 in the 0700 cluster folder: the super user's SASL name and password
and the password of the client key in ``tls/`` (``localtls``)::

    KGITOPS_LOCAL_KAFKA_USERNAME=admin
    KGITOPS_LOCAL_KAFKA_PASSWORD=...
    KGITOPS_LOCAL_KAFKA_KEY_PASSWORD=...

A shell can source it; ``security.sasl.usernameEnv``/``passwordEnv`` and
``security.ssl.keyPasswordEnv`` can name its variables."""

from __future__ import annotations

from kgitops.cluster.kafka.localprops import ADMIN_USER
from kgitops.cluster.kafka.localtls import CLIENT_KEY, TLS_DIR
from kgitops.errors import LocalBrokerError

CREDENTIALS_FILE = "admin.env"
USERNAME_VAR = "KGITOPS_LOCAL_KAFKA_USERNAME"
PASSWORD_VAR = "KGITOPS_LOCAL_KAFKA_PASSWORD"
KEY_PASSWORD_VAR = "KGITOPS_LOCAL_KAFKA_KEY_PASSWORD"  # tls/client.key's


def admin_env(password: str, key_password: str) -> str:
    """The text of ``admin.env``."""
    return (
        f"# the local Kafka cluster's super user (SASL PLAIN and SCRAM-SHA-512)\n"
        f"{USERNAME_VAR}={ADMIN_USER}\n{PASSWORD_VAR}={password}\n"
        f"# the password of {TLS_DIR}/{CLIENT_KEY} (the MTLS listener's client key)\n"
        f"{KEY_PASSWORD_VAR}={key_password}\n"
    )


def credentials(path: str) -> tuple[str, str]:
    """The super user's name and password, from the ``admin.env`` at ``path``."""
    values = _read(path)
    try:
        return values[USERNAME_VAR], values[PASSWORD_VAR]
    except KeyError:
        raise LocalBrokerError(f"{path} has no admin credentials") from None


def key_password(path: str) -> str:
    """The client key's password, from the ``admin.env`` at ``path``."""
    try:
        return _read(path)[KEY_PASSWORD_VAR]
    except KeyError:
        raise LocalBrokerError(
            f"{path} has no {KEY_PASSWORD_VAR}: a folder made before the MTLS listener "
            "(local down, then up)"
        ) from None


def _read(path: str) -> dict[str, str]:
    values: dict[str, str] = {}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                key, sep, value = line.strip().partition("=")
                if sep:
                    values[key] = value
    except OSError as exc:
        raise LocalBrokerError(f"cannot read {path}: {exc}") from None
    return values
