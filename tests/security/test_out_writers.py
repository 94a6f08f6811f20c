"""One rule for every ``--out`` (kgitops.files.check_output): no writer replaces a spec, the
lock, a state file a spec names (or its locks), a key sample a spec names, a file of another
kind, or anything through a symlink; the name ends as the format does; an empty result never
replaces a file.

Each test runs the CLI and then reads the files back: exit 1, one line, every file as it was.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgitops.cli import main
from tests.helpers import THREE_RACKS, cluster_folder, cluster_yaml, tree

CLUSTER = cluster_yaml("test", brokers=THREE_RACKS, state_file="state.json")

TOPIC = """\
apiVersion: kgitops/v1
kind: Topic
name: orders
partitions: 3
replicationFactor: 3
keys:
  sample: samples/orders.parquet
  column: key
"""

OTHER = """\
apiVersion: kgitops/v1
kind: Topic
name: payments
partitions: 3
replicationFactor: 3
keys:
  sample: samples/payments.data
  column: key
"""


def _one_error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = [line for line in (captured.out + captured.err).splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A simulated cluster folder with its state file, a lock, a plan, a snapshot and two
    key samples already on disk."""
    d = cluster_folder(
        tmp_path / "prod", cluster=CLUSTER, files={"orders.yaml": TOPIC, "payments.yaml": OTHER}
    )
    (d / "samples").mkdir()
    (d / "samples" / "orders.parquet").write_bytes(b"PAR1 orders sample PAR1")
    (d / "samples" / "payments.data").write_bytes(b"PAR1 payments sample PAR1")
    assert main(["plan", str(d), "--update-lock"]) == 0
    assert main(["apply", str(d), "--yes"]) == 0
    assert (d / "state.json").is_file() and (d / "kgitops.lock").is_file()
    assert main(["plan", str(d), "--out", str(tmp_path / "plan.json")]) == 0
    assert main(["snapshot", str(d), "--out", str(tmp_path / "snap.json")]) == 0
    return d


def _refused(argv: list[str], root: Path, capsys: pytest.CaptureFixture[str], reason: str) -> None:
    capsys.readouterr()
    before = tree(root)
    assert main(argv) == 1
    assert reason in _one_error(capsys)
    assert tree(root) == before


SPEC_FILES = ["cluster.yaml", "orders.yaml", "kgitops.lock", "state.json.lock"]


@pytest.mark.parametrize("name", SPEC_FILES)
def test_plan_out_never_writes_a_spec_or_a_lock(
    folder: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (folder / "state.json.lock").touch()
    out = str(folder / name)
    _refused(["plan", str(folder), "--out", out], folder.parent, capsys, "ends in .json")


def test_plan_out_never_replaces_the_simulated_state_file(
    folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(folder / "state.json")
    _refused(["plan", str(folder), "--out", out], folder.parent, capsys, "state.json")


def test_plan_out_never_replaces_another_folders_state_file(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = cluster_folder(tmp_path / "staging", cluster=CLUSTER.replace("state.json", "st/s.json"))
    (other / "st").mkdir()
    (other / "st" / "s.json").write_text("")  # empty, so only the name protects it
    out = str(other / "st" / "s.json")
    _refused(["plan", str(folder), "--out", out], tmp_path, capsys, "simulated state file")


def test_plan_out_replaces_a_plan_but_not_a_snapshot(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    snap = str(tmp_path / "snap.json")
    _refused(["plan", str(folder), "--out", snap], tmp_path, capsys, "is not a plan (JSON)")
    assert json.loads((tmp_path / "snap.json").read_text())["format"] == "kgitops-state/v1"
    assert main(["plan", str(folder), "--out", str(tmp_path / "plan.json")]) == 0
    assert json.loads((tmp_path / "plan.json").read_text())["format"] == "kgitops-plan/v1"


def test_plan_out_never_writes_through_a_symlink(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "link.json").symlink_to(tmp_path / "plan.json")
    out = str(tmp_path / "link.json")
    _refused(["plan", str(folder), "--out", out], tmp_path, capsys, "a symlink")


@pytest.mark.parametrize("name", ["orders.yaml", "kgitops.lock", "state.json"])
def test_export_reassignment_out_never_writes_a_spec_the_lock_or_the_state(
    folder: Path, tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["export-reassignment", str(tmp_path / "plan.json"), "--out", str(folder / name)]
    _refused(argv, tmp_path, capsys, "ends in .json" if name != "state.json" else "state file")


def test_export_reassignment_out_never_replaces_the_plan_it_reads(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = str(tmp_path / "plan.json")
    argv = ["export-reassignment", plan, "--out", plan]
    _refused(argv, tmp_path, capsys, "is not a Kafka reassignment (JSON)")


def test_export_reassignment_empty_result_never_replaces_a_file(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "moves.json"
    old = '{"version": 1, "partitions": [{"topic": "orders", "partition": 0, "replicas": [1]}]}'
    out.write_text(old)
    argv = ["export-reassignment", str(tmp_path / "plan.json"), "--out", str(out)]
    _refused(argv, tmp_path, capsys, "the result is empty")
    assert out.read_text() == old
    out.unlink()
    assert main(argv) == 0
    assert json.loads(out.read_text()) == {"version": 1, "partitions": []}


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("state.json", "the simulated state file"),
        ("state.json.lock", "ends in .json"),
        ("state.json.apply.lock", "ends in .json"),
        ("samples/orders.parquet", "ends in .json"),
        ("orders.yaml", "ends in .json"),
    ],
)
def test_snapshot_out_never_replaces_the_state_file_its_locks_or_a_sample(
    folder: Path, name: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["snapshot", str(folder), "--out", str(folder / name)]
    _refused(argv, folder.parent, capsys, reason)


def test_snapshot_out_never_replaces_a_plan_but_replaces_a_snapshot(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["snapshot", str(folder), "--out", str(tmp_path / "plan.json")]
    _refused(argv, tmp_path, capsys, "is not a state snapshot (JSON)")
    assert main(["snapshot", str(folder), "--out", str(tmp_path / "snap.json")]) == 0


@pytest.fixture
def real(tmp_path: Path) -> Path:
    """A real cluster's folder (sample-keys refuses a simulated one); nothing listens."""
    d = cluster_folder(
        tmp_path / "real",
        "prod",
        bootstrap="127.0.0.1:1",
        extra="unmanagedTopics: ignore\n",
        files={"orders.yaml": TOPIC, "payments.yaml": OTHER, "kgitops.lock": "# lock\n"},
    )
    (d / "samples").mkdir()
    (d / "samples" / "orders.parquet").write_bytes(b"PAR1 orders sample PAR1")
    (d / "samples" / "payments.data").write_bytes(b"PAR1 payments sample PAR1")
    return d


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("cluster.yaml", "ends in .parquet"),
        ("orders.yaml", "ends in .parquet"),
        ("kgitops.lock", "ends in .parquet"),
        ("x.csv", "ends in .parquet"),
        ("samples/payments.data", "ends in .parquet"),
    ],
)
def test_sample_keys_out_never_writes_a_spec_the_lock_or_another_format(
    real: Path, name: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["sample-keys", str(real), "--topic", "orders", "--out", str(real / name)]
    _refused(argv, real.parent, capsys, reason)
    assert not (real / "x.csv").exists()


def test_sample_keys_out_never_replaces_another_topics_sample(
    real: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (real / "payments.yaml").write_text(OTHER.replace("payments.data", "payments.parquet"))
    (real / "samples" / "payments.parquet").write_bytes(b"PAR1 payments PAR1")
    out = str(real / "samples" / "payments.parquet")
    argv = ["sample-keys", str(real), "--topic", "orders", "--out", out]
    _refused(argv, real.parent, capsys, "the key sample of topic payments")


def test_sample_keys_empty_result_never_replaces_the_sample(
    real: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("pyarrow")
    import kgitops.cluster.kafka.sample as sample

    monkeypatch.setattr(sample, "sample_keys", lambda *a, **k: [])  # --timeout 0 read nothing
    argv = ["sample-keys", str(real), "--topic", "orders", "--timeout", "0"]
    _refused(argv, real.parent, capsys, "read no message of orders")
    assert (real / "samples" / "orders.parquet").read_bytes() == b"PAR1 orders sample PAR1"


def test_analyze_keys_out_never_writes_a_spec(
    real: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "analyze",
        "keys",
        "--input",
        str(real / "samples" / "orders.parquet"),
        "--key-column",
        "key",
        "--partitions",
        "3",
        "--out",
        str(real / "cluster.yaml"),
    ]
    _refused(argv, real.parent, capsys, "ends in .json")


def test_out_never_writes_apply_records_nor_into_a_cluster_folder_it_cannot_read(
    tmp_path: Path,
) -> None:
    """Review: a snapshot --out into another cluster folder whose cluster.yaml has an error
    replaced that folder's simulated state past its lock; --out could create apply's own
    move and throttle records."""
    import shutil

    from kgitops.cli import main

    root = Path(__file__).resolve().parents[2]
    shutil.copytree(root / "topics" / "demo", tmp_path / "demo")
    shutil.copytree(root / "topics" / "demo", tmp_path / "b")
    (tmp_path / "b" / ".state").mkdir(exist_ok=True)
    victim = tmp_path / "b" / ".state" / "demo.json"
    victim.write_text('{"untouched": true}')
    with (tmp_path / "b" / "cluster.yaml").open("a") as f:
        f.write("bogusKey: 1\n")
    (tmp_path / "demo" / ".kgitops").mkdir()
    targets = [
        victim,
        tmp_path / "demo" / ".kgitops" / "moves.json",
        tmp_path / "demo" / ".state" / "demo.json.apply-throttles.json",
    ]
    (tmp_path / "demo" / ".state").mkdir(exist_ok=True)
    for target in targets:
        assert main(["snapshot", str(tmp_path / "demo"), "--out", str(target)]) == 1, target
    assert victim.read_text() == '{"untouched": true}'
    assert not targets[1].exists() and not targets[2].exists()
