"""Hostile files: every read is of a regular file, under the size cap, decoded and parsed
into one positioned line, never a traceback, never a hang."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from kgitops.cli import main
from kgitops.errors import FileRefused
from kgitops.files import (
    PLAN_OUT,
    check_output,
    file_size_limit,
    path_problem,
    read_bytes,
    write_atomic,
)
from kgitops.jsontext import MAX_DEPTH, loads_json
from tests.helpers import THREE_RACKS, cluster_folder, cluster_yaml


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "state.json"
    os.mkfifo(fifo)
    done: list[BaseException] = []

    def read() -> None:
        try:
            read_bytes(str(fifo))
        except BaseException as exc:
            done.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "reading a FIFO blocked"
    assert isinstance(done[0], FileRefused)
    assert "a FIFO, not a regular file" in str(done[0])


def test_a_symlink_to_dev_zero_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "plan.json"
    link.symlink_to("/dev/zero")
    with pytest.raises(FileRefused, match="a character device, not a regular file"):
        read_bytes(str(link))


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileRefused, match="a folder, not a regular file"):
        read_bytes(str(tmp_path))


def test_a_file_over_the_cap_is_refused_and_the_cap_can_be_raised(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 2000)
    with file_size_limit(1000), pytest.raises(FileRefused, match="--max-file-size"):
        read_bytes(str(big))
    with file_size_limit(2000):
        assert len(read_bytes(str(big))) == 2000


def test_a_symlink_out_of_the_root_is_refused_unread(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n")
    folder = tmp_path / "prod"
    folder.mkdir()
    (folder / "topic.yaml").symlink_to(secret)
    with pytest.raises(FileRefused) as caught:
        read_bytes(str(folder / "topic.yaml"), root=str(folder))
    assert "outside the cluster folder" in str(caught.value)
    assert "root:x" not in str(caught.value)


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("../../../x", "leads outside the cluster folder"),
        ("/etc/passwd", "is an absolute path"),
        ("file:///etc/passwd", "is a URI"),
        ("https://example.com/ca.pem", "is a URI"),
        ("", "an empty path"),
    ],
)
def test_spec_paths_must_stay_in_the_folder(tmp_path: Path, path: str, problem: str) -> None:
    found = path_problem(str(tmp_path), path)
    assert found is not None and problem in found


def test_a_symlinked_folder_out_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "prod"
    folder.mkdir()
    (folder / ".state").symlink_to(tmp_path)
    found = path_problem(str(folder), ".state/demo.json")
    assert found is not None and "through a symlink" in found
    assert path_problem(str(folder), "sub/../.keep") is None


def test_json_nested_100k_deep_is_one_positioned_line() -> None:
    with pytest.raises(FileRefused) as caught:
        loads_json(b"[" * 100_000 + b"]" * 100_000, "s.json")
    assert str(caught.value) == f"s.json:1:{MAX_DEPTH + 1}: error: nested more than 200 deep"


def test_json_nesting_up_to_the_limit_and_brackets_in_strings_are_fine() -> None:
    assert loads_json("[" * MAX_DEPTH + "]" * MAX_DEPTH, "s.json") == loads_json(
        "[" * MAX_DEPTH + "]" * MAX_DEPTH, "s.json"
    )
    text = '{"a": "' + "[" * 1000 + '\\"\\\\", "b": [1]}'
    assert loads_json(text, "s.json")["b"] == [1]


def test_binary_bad_utf8_and_bom(tmp_path: Path) -> None:
    with pytest.raises(FileRefused, match=r"^s.json:2:3: error: a binary file"):
        loads_json(b'{\n  \x00"a": 1}', "s.json")
    with pytest.raises(FileRefused, match=r"^s.json:1:8: error: not UTF-8 text \(byte 0xff\)"):
        loads_json(b'{"a": "\xff"}', "s.json")
    assert loads_json(b'\xef\xbb\xbf{"a": 1}', "s.json") == {"a": 1}


def test_write_atomic_does_not_write_through_a_committed_tmp_symlink(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    folder = tmp_path / "prod"
    folder.mkdir()
    (folder / "kgitops.lock.tmp").symlink_to(outside)
    write_atomic(str(folder / "kgitops.lock"), "version: 1\n", root=str(folder))
    assert not outside.exists()
    assert (folder / "kgitops.lock").read_text() == "version: 1\n"


def test_write_atomic_refuses_a_symlinked_target(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    folder = tmp_path / "prod"
    folder.mkdir()
    (folder / "kgitops.lock").symlink_to(outside)
    with pytest.raises(FileRefused, match="a symlink; kgitops does not write through symlinks"):
        write_atomic(str(folder / "kgitops.lock"), "x", root=str(folder))
    assert outside.read_text() == "keep me\n"
    assert sorted(os.listdir(folder)) == ["kgitops.lock"]


def test_write_atomic_creates_no_missing_folder_unless_asked_inside_the_root(
    tmp_path: Path,
) -> None:
    with pytest.raises(FileRefused, match="does not exist"):
        write_atomic(str(tmp_path / "a" / "b" / "s.json"), "{}")
    with pytest.raises(FileRefused, match="does not exist"):  # make_dirs only with a root
        write_atomic(str(tmp_path / "a" / "b" / "s.json"), "{}", make_dirs=True)
    assert not (tmp_path / "a").exists()
    folder = tmp_path / "prod"
    folder.mkdir()
    write_atomic(str(folder / ".state" / "s.json"), "{}", root=str(folder), make_dirs=True)
    assert (folder / ".state" / "s.json").read_text() == "{}"


def test_write_atomic_and_check_output_refuse_a_bad_folder_in_the_same_words(
    tmp_path: Path,
) -> None:
    (tmp_path / "file").write_text("keep me\n")
    for path, said in (
        (tmp_path / "file" / "p.json", f"{tmp_path / 'file'} is not a folder"),
        (
            tmp_path / "none" / "p.json",
            f"the folder {tmp_path / 'none'} does not exist; create it first",
        ),
    ):
        for write in (lambda p: write_atomic(p, "{}"), lambda p: check_output(p, PLAN_OUT)):
            with pytest.raises(FileRefused) as refused:
                write(str(path))
            assert str(refused.value) == f"{path}:1:1: error: {said}"
    assert os.listdir(tmp_path) == ["file"] and (tmp_path / "file").read_text() == "keep me\n"


def test_max_file_size_flag_is_taken_by_every_command(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    plan = tmp_path / "plan.json"
    plan.write_text(" " * 2000 + "{}")
    assert main(["export-reassignment", str(plan), "--max-file-size", "1kB"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "larger than the 1,000-byte limit" in err[0]
    assert main(["--max-file-size", "nonsense", "validate", str(tmp_path)]) == 1


def test_one_big_anchor_aliased_thousands_of_times_fails_fast(tmp_path: Path) -> None:
    import resource
    import subprocess
    import sys

    cluster_folder(tmp_path, "c", bootstrap="h:9092")
    items = ",".join(["x"] * 20_000)
    aliases = ",".join(["*a"] * 9_000)
    bomb = f"big: &a [{items}]\nmany: [{aliases}]\n"
    assert len(bomb) < 70_000  # 180 million values once expanded

    def limit_memory() -> None:  # 1 GB of address space: expanding it would need far more
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    (tmp_path / "bomb.yaml").write_text(bomb)
    done = subprocess.run(
        [sys.executable, "-m", "kgitops", "validate", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limit_memory,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        f"{tmp_path}/bomb.yaml:1:6: error: aliases expand to more than 100,000 values"
    ]
    assert done.stderr.splitlines() == [f"{tmp_path}: 0 topics, 1 error(s), 0 warning(s)"]


# --------------------------------------------------------------- through the commands

CLUSTER_YAML = cluster_yaml("test", brokers=THREE_RACKS)


def _folder(tmp_path: Path) -> Path:
    orders = (
        "apiVersion: kgitops/v1\nkind: Topic\nname: orders\npartitions: 3\nreplicationFactor: 3\n"
    )
    return cluster_folder(tmp_path / "prod", cluster=CLUSTER_YAML, files={"orders.yaml": orders})


def _state(partition: dict[str, object]) -> str:
    return json.dumps(
        {
            "format": "kgitops-state/v1",
            "brokers": [{"id": 0, "rack": "a"}, {"id": 1, "rack": "b"}, {"id": 2, "rack": "c"}],
            "topics": {"orders": {"partitions": {"0": partition}, "config": {}}},
        }
    )


def _lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    captured = capsys.readouterr()
    return [line for line in (captured.out + captured.err).splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"[" * 100_000 + b"]" * 100_000, ":1:201: error: nested more than 200 deep"),
        (b'{"format": "kgitops-state/v1",\x00}', ":1:31: error: a binary file (NUL byte)"),
        (b'{"format": "\xc0"}', ":1:13: error: not UTF-8 text (byte 0xc0)"),
    ],
)
def test_a_hostile_state_file_is_one_positioned_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, expected: str
) -> None:
    folder = _folder(tmp_path)
    state = tmp_path / "state.json"
    state.write_bytes(content)
    assert main(["plan", str(folder), "--state", str(state)]) == 1
    [line] = _lines(capsys)
    assert line.startswith(f"{state}{expected}")
    # the simulated cluster's own state file, the same
    (folder / ".state").mkdir()
    (folder / ".state" / "test.json").write_bytes(content)
    assert main(["plan", str(folder)]) == 1
    [line] = _lines(capsys)
    assert line.startswith(f"{folder / '.state' / 'test.json'}{expected}")


def test_a_state_file_with_a_utf8_bom_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path)
    state = tmp_path / "state.json"
    state.write_bytes(b"\xef\xbb\xbf" + _state({"replicas": [0, 1, 2]}).encode())
    assert main(["plan", str(folder), "--state", str(state), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["cluster"] == "test"


@pytest.mark.parametrize(
    ("partition", "expected"),
    [
        (
            {"replicas": [0, 1, 2], "isr": [0, 1, 2], "leader": 5},
            "topics.orders.partitions.0.leader: leader 5 is not one of the replicas",
        ),
        (
            {"replicas": [0, 1, 2], "isr": [0, 7], "leader": 0},
            "topics.orders.partitions.0.isr: in-sync broker(s) 7 are not replicas",
        ),
    ],
)
def test_leader_and_isr_must_be_among_the_replicas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], partition: dict[str, object], expected: str
) -> None:
    folder = _folder(tmp_path)
    state = tmp_path / "state.json"
    state.write_text(_state(partition))
    assert main(["plan", str(folder), "--state", str(state)]) == 1
    [line] = _lines(capsys)
    assert line.startswith(f"{state}:1:") and line.endswith(f": error: {expected}")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"version: 1\x00\n", "kgitops.lock:1:11: a binary file"),
        (
            b"a: &a ["
            + b",".join([b"x"] * 20_000)
            + b"]\nb: ["
            + b",".join([b"*a"] * 9_000)
            + b"]\n",
            "kgitops.lock:1:4: aliases expand to more than 100,000 values",
        ),
    ],
)
def test_a_hostile_lock_is_one_positioned_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, expected: str
) -> None:
    folder = _folder(tmp_path)
    (folder / "kgitops.lock").write_bytes(content)
    assert main(["plan", str(folder)]) == 1
    [line] = _lines(capsys)
    assert line.startswith(f"error: {folder}/") and expected in line


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b'{"format": "kgitops-plan/v1"}\n\x00\x01\x02', ":2:1: error: a binary file (NUL byte)"),
        (b'{"actions": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", ":1:212: error: nested more"),
    ],
)
def test_a_hostile_plan_file_is_one_positioned_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, expected: str
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_bytes(content)
    for command in (["apply", "--plan", str(plan), "--yes"], ["export-reassignment", str(plan)]):
        assert main(command) == 1
        [line] = _lines(capsys)
        assert line.startswith(f"{plan}{expected}")


def test_a_plan_with_a_utf8_bom_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _folder(tmp_path)
    plan = tmp_path / "plan.json"
    assert main(["plan", str(folder), "--out", str(plan)]) == 0
    plan.write_bytes(b"\xef\xbb\xbf" + plan.read_bytes())
    capsys.readouterr()
    assert main(["export-reassignment", str(plan)]) == 0


def test_a_garbage_fingerprint_is_a_malformed_plan_not_a_changed_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path)
    plan = tmp_path / "plan.json"
    assert main(["plan", str(folder), "--out", str(plan)]) == 0
    capsys.readouterr()
    data = json.loads(plan.read_text())
    data["stateFingerprint"] = "garbage"
    plan.write_text(json.dumps(data))
    assert main(["apply", "--plan", str(plan), "--yes"]) == 1
    out = "\n".join(_lines(capsys))
    assert "stateFingerprint" in out and "brokers changed" not in out
    assert (
        not (folder / ".state" / "test.json").exists()
        or "orders" not in (folder / ".state" / "test.json").read_text()
    )


def test_local_down_never_signals_a_pid_a_committed_broker_json_names(tmp_path: Path) -> None:
    import subprocess
    import sys

    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        folder = tmp_path / ".kgitops" / "local"
        folder.mkdir(parents=True)
        (folder / "broker.json").write_text(
            json.dumps({"pid": victim.pid, "port": 19092, "binary": sys.executable, "startTime": 0})
        )
        assert main(["local", "down", "--dir", str(folder)]) == 0
        assert main(["local", "status", "--dir", str(folder)]) == 1
        assert victim.poll() is None, "kgitops killed a process it did not start"
    finally:
        victim.kill()
        victim.wait()
