"""Whether a bootstrap address is definitively unreachable: no such host, or nothing listening.

kafka-python retries a failed bootstrap connection until its deadline (10 s by default), also
when the failure cannot get better by waiting: a host name that does not resolve (a typo,
``kafka.prod.invalid``) or a port that refuses (``127.0.0.1:9093`` with the broker on 9092).
The bootstrap guard asks ``why_unreachable`` once it has seen a connection fail; when every
bootstrap address is one of these, it asks again after ``GRACE_SECONDS`` (a broker that is
just starting binds its port in that time) and then ends the bootstrap with one line::

    cannot reach cluster 'prod' at kafka-1.prod.invalid:9092: kafka-1.prod.invalid does not
    resolve (no such host); check the host names and ports in bootstrapServers

Anything that may pass -- a temporary DNS failure (``EAI_AGAIN``), a timeout, a host that
answers -- is not definitive, and the bootstrap goes on to its deadline as before.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence

from kgitops.cluster.kafka.tls import split_address

#: How long a refusal has to last before it counts (a broker binding its port right now).
GRACE_SECONDS = 1.0
#: Each probe's own timeout (a refusal or a name error comes back at once; anything that
#: takes this long is not definitive).
PROBE_SECONDS = 1.0
#: getaddrinfo's answers that say the name does not exist (not "try again").
NO_SUCH_HOST = {
    code
    for code in (getattr(socket, "EAI_NONAME", None), getattr(socket, "EAI_NODATA", None))
    if code is not None
}


def why_unreachable(address: str, timeout: float = PROBE_SECONDS) -> str | None:
    """Why ``address`` can never be connected to as it is, or None when it might be."""
    host, port = split_address(address)
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        if exc.errno in NO_SUCH_HOST:
            return f"{host} does not resolve (no such host)"
        return None
    except (OSError, UnicodeError):
        return None
    if not found:
        return None
    for family, kind, proto, _, where in found:
        with socket.socket(family, kind, proto) as probe:
            probe.settimeout(timeout)
            try:
                probe.connect(where)
            except ConnectionRefusedError:
                continue
            except OSError:  # a timeout, no route: may pass, not definitive
                return None
            return None  # something listens
    return f"{address} refused the connection (nothing listens on that port)"


def all_unreachable(addresses: Sequence[str], timeout: float = PROBE_SECONDS) -> list[str] | None:
    """One reason per address when every one is definitively unreachable, else None."""
    reasons = []
    for address in addresses:
        why = why_unreachable(address, timeout)
        if why is None:
            return None
        reasons.append(why)
    return reasons or None
