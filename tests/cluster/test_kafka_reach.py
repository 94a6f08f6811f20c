"""A bootstrap that cannot succeed by waiting -- a host name that does not resolve, a port that
refuses -- fails in about a second with one line naming each address, not at the end of the
10 s connection timeout; anything that may still pass waits as before."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from kgitops.cli import main
from kgitops.cluster.kafka.admin import KafkaAdmin
from kgitops.cluster.kafka.reach import all_unreachable, why_unreachable
from kgitops.cluster.local import free_port
from kgitops.errors import ClusterTimeout, ClusterUnreachable
from kgitops.model import ClusterSpec
from tests.helpers import cluster_folder

NO_HOST = "kafka-1.nosuch.invalid"  # RFC 2606: .invalid never resolves


def spec_for(*servers: str, timeout_ms: int = 10_000) -> ClusterSpec:
    return ClusterSpec(
        name="prod", directory=".", bootstrap_servers=servers, request_timeout_ms=timeout_ms
    )


def test_a_refused_port_and_an_unknown_host_are_definitive_a_listener_is_not() -> None:
    port = free_port()
    assert why_unreachable(f"127.0.0.1:{port}") == (
        f"127.0.0.1:{port} refused the connection (nothing listens on that port)"
    )
    assert why_unreachable(f"{NO_HOST}:9092") == f"{NO_HOST} does not resolve (no such host)"
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        up = f"127.0.0.1:{server.getsockname()[1]}"
        assert why_unreachable(up) is None
        assert all_unreachable([f"127.0.0.1:{port}", up]) is None  # one may answer: wait
    assert all_unreachable([f"127.0.0.1:{port}", f"{NO_HOST}:9092"]) == [
        f"127.0.0.1:{port} refused the connection (nothing listens on that port)",
        f"{NO_HOST} does not resolve (no such host)",
    ]


@pytest.mark.parametrize("kind", ["refused", "dns", "both"])
def test_a_bootstrap_that_cannot_succeed_fails_well_inside_the_timeout(kind: str) -> None:
    port = free_port()
    servers = {
        "refused": [f"127.0.0.1:{port}"],
        "dns": [f"{NO_HOST}:9092"],
        "both": [f"{NO_HOST}:9092", f"127.0.0.1:{port}"],
    }[kind]
    start = time.monotonic()
    with pytest.raises(ClusterUnreachable) as info:
        KafkaAdmin(spec_for(*servers))
    took = time.monotonic() - start
    assert took < 4.0, f"{took:.1f} s against a 10 s timeout"
    message = str(info.value)
    assert message.startswith(f"cannot reach cluster 'prod' at {', '.join(servers)}: ")
    assert message.endswith(
        "; check the host names and ports in bootstrapServers and that the brokers are up"
    )
    if kind != "dns":
        assert f"127.0.0.1:{port} refused the connection" in message
    if kind != "refused":
        assert f"{NO_HOST} does not resolve (no such host)" in message


def test_a_port_that_starts_listening_within_the_grace_is_waited_for() -> None:
    """Bound but not listening refuses; it listens 0.3 s later (a broker starting): no
    definitive verdict, the bootstrap waits to its deadline (the server never answers)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        port = server.getsockname()[1]
        timer = threading.Timer(0.3, server.listen, args=(5,))
        timer.start()
        try:
            start = time.monotonic()
            with pytest.raises((ClusterUnreachable, ClusterTimeout)) as info:
                KafkaAdmin(spec_for(f"127.0.0.1:{port}", timeout_ms=2500))
            assert time.monotonic() - start >= 2.5
        finally:
            timer.cancel()
    assert "refused the connection" not in str(info.value)


def test_the_cli_says_it_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cluster_folder(tmp_path, "typo", bootstrap=f"{NO_HOST}:9092")
    start = time.monotonic()
    assert main(["plan", str(tmp_path)]) == 1
    assert time.monotonic() - start < 7.0  # loading the specs and kafka-python included
    assert capsys.readouterr().err == (
        f"error: cannot reach cluster 'typo' at {NO_HOST}:9092: {NO_HOST} does not resolve "
        "(no such host); check the host names and ports in bootstrapServers and that the "
        "brokers are up\n"
    )
