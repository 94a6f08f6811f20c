"""The local broker: start_broker() for tests, and `kgitops local up|down|status`."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from kgitops.cli import main
from kgitops.cluster.local import free_port, metadata_answers, start_broker, status

pytestmark = pytest.mark.broker


def test_start_broker_gives_a_broker_that_answers_and_stop_ends_it() -> None:
    broker = start_broker()
    host, port = broker.bootstrap.split(":")
    assert host == "127.0.0.1"
    assert metadata_answers(host, int(port))
    broker.stop()
    assert not metadata_answers(host, int(port))
    broker.stop()  # twice is harmless


def test_the_health_check_needs_a_kafka_answer_not_just_an_open_port() -> None:
    assert not metadata_answers("127.0.0.1", free_port())
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        assert not metadata_answers("127.0.0.1", server.getsockname()[1], timeout=0.3)


def test_local_up_status_down(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = str(tmp_path / "local")
    port = free_port()
    assert main(["local", "status", "--dir", d]) == 1
    assert "not running" in capsys.readouterr().out
    try:
        assert main(["local", "up", "--dir", d, "--port", str(port)]) == 0
        out = capsys.readouterr().out
        assert f"127.0.0.1:{port}" in out
        recorded = json.loads((tmp_path / "local" / "broker.json").read_text())
        assert recorded["port"] == port
        assert metadata_answers("127.0.0.1", port)

        assert main(["local", "up", "--dir", d, "--port", str(port)]) == 0  # already up
        assert main(["local", "status", "--dir", d]) == 0
        assert "answering" in capsys.readouterr().out
    finally:
        assert main(["local", "down", "--dir", d]) == 0
    assert "stopped" in capsys.readouterr().out
    assert not metadata_answers("127.0.0.1", port)
    assert not status(d).running
    assert not (tmp_path / "local" / "broker.json").exists()
    assert main(["local", "down", "--dir", d]) == 0
    assert "no local broker running" in capsys.readouterr().out


def test_a_taken_port_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        code = main(["local", "up", "--dir", str(tmp_path), "--port", str(port)])
    err = capsys.readouterr().err
    assert code == 1
    assert f"port {port} on 127.0.0.1 is already in use" in err
    assert "Traceback" not in err


def test_a_missing_binary_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CALF_TANSU_BIN", str(tmp_path / "no-such-tansu"))
    code = main(["local", "up", "--dir", str(tmp_path), "--port", str(free_port())])
    err = capsys.readouterr().err
    assert code == 1
    assert "no Tansu broker binary found" in err and "no-such-tansu" in err
    assert "Traceback" not in err


def test_a_second_up_on_another_port_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = str(tmp_path)
    assert main(["local", "up", "--dir", d, "--port", str(free_port())]) == 0
    try:
        assert main(["local", "up", "--dir", d, "--port", str(free_port())]) == 1
        assert "already runs" in capsys.readouterr().err
    finally:
        main(["local", "down", "--dir", d])


def test_a_stale_pid_file_reads_as_not_running(tmp_path: Path) -> None:
    (tmp_path / "broker.json").write_text(
        json.dumps({"pid": 2**22 + 12345, "port": free_port(), "binary": "tansu", "log": "x"})
    )
    assert not status(str(tmp_path)).running
    assert os.path.exists(tmp_path / "broker.json")
