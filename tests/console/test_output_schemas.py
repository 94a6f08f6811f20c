"""The JSON that `tail --format json` and `reset-offsets --format json` print is what their
schemas (kgitops/schemas/tail.json, reset-offsets.json) say: every field the code writes is in
the schema, every field the schema names is always written, and real outputs validate.
(The real `tail` lines are validated on the local broker in test_tail.py and
test_tail_follow.py.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from kgitops.cli import main
from kgitops.cluster.port import NewTopic
from kgitops.cluster.simulated import SimulatedCluster
from kgitops.console.messages import message_json
from kgitops.console.offsets import reset_plan
from kgitops.model import Broker
from kgitops.records import Message
from kgitops.spec.schemacheck import schema
from tests.helpers import cluster_folder

TAIL = Draft202012Validator(schema("tail.json"))
RESET = Draft202012Validator(schema("reset-offsets.json"))

MESSAGES = [
    Message("t", 0, 0, 1_700_000_000_000, "CreateTime", b"k", b"v", (("h", b"x"),), 2),
    Message("t", 3, 9, None, "none", None, None, (), 0),  # no key, a tombstone, no time
    Message(
        "t.x-1",
        1,
        2**62,
        2**62,  # a timestamp no calendar holds: shown as null, the ms kept
        "LogAppendTime",
        b"\xff\xfe\x00",
        "\x1b[2J\u202e\ud7ff".encode(),
        (("trace", None), ("bin", b"\x80"), ("\x1b]0;title\x07", b"")),
        6,
    ),
]


@pytest.mark.parametrize("m", MESSAGES, ids=["text", "nulls", "hostile"])
def test_every_tail_line_shape_validates(m: Message) -> None:
    line = json.dumps(message_json(m), ensure_ascii=True)
    TAIL.validate(json.loads(line))


def test_tail_lines_hold_exactly_the_fields_the_schema_names() -> None:
    props = schema("tail.json")["properties"]
    assert sorted(schema("tail.json")["required"]) == sorted(props)
    header = schema("tail.json")["properties"]["headers"]["items"]
    for m in MESSAGES:
        data = message_json(m)
        assert sorted(data) == sorted(props)  # a new field needs its schema entry
        for h in data["headers"]:
            assert sorted(h) == sorted(header["properties"])


def test_a_field_the_schema_lacks_is_refused() -> None:
    data = message_json(MESSAGES[0])
    assert TAIL.is_valid(data)
    assert not TAIL.is_valid({**data, "leaderEpoch": 3})
    assert not TAIL.is_valid({**data, "value": {"text": "v", "base64": "dg=="}})
    assert not TAIL.is_valid({**data, "value": {"base64": "not base64!"}})
    plan = reset_plan({0: 5}, {0: (0, 10)}, {0: 7}).to_json("g", "t", False)
    assert RESET.is_valid(plan)
    assert not RESET.is_valid({**plan, "dryRun": True})
    row = plan["partitions"][0]
    assert not RESET.is_valid({**plan, "partitions": [{**row, "lag": 3}]})


def test_reset_plans_hold_exactly_the_fields_the_schema_names() -> None:
    s = schema("reset-offsets.json")
    row = s["properties"]["partitions"]["items"]
    assert sorted(s["required"]) == sorted(s["properties"])
    assert sorted(row["required"]) == sorted(row["properties"])
    plan = reset_plan(
        {0: 5, 1: None, 2: None, 3: 8}, {p: (2, 10) for p in range(4)}, {0: 12, 1: 0, 2: None, 3: 4}
    )
    data = plan.to_json("g\x1b", "t", True)
    RESET.validate(data)
    assert sorted(data) == sorted(s["properties"])
    assert [sorted(r) for r in data["partitions"]] == [sorted(row["properties"])] * 3
    assert len(data["notes"]) == 3  # clamped past the end, before the start; left out


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    cluster_folder(tmp_path, brokers=[Broker(0), Broker(1)])
    s = SimulatedCluster.open(str(tmp_path / ".state" / "demo.json"), [Broker(0), Broker(1)])
    s.create_topics([NewTopic("orders", {0: (0, 1), 1: (1, 0)})])
    s.set_produce_rate("orders", 10 * 1024)
    s.advance(10)
    s.commit("billing", {("orders", 0): 40})
    s.close()
    return tmp_path


@pytest.mark.parametrize(
    "argv",
    [
        ["--to-earliest"],
        ["--to-latest", "--yes"],
        ["--to-offset", "999", "--partitions", "1"],
        ["--shift-by", "-100", "--yes"],
        ["--shift-by", "0"],
    ],
    ids=lambda a: " ".join(a),
)
def test_real_reset_offsets_outputs_validate(
    folder: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    head = ["reset-offsets", str(folder), "--group", "billing", "--topic", "orders"]
    code = main([*head, *argv, "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    RESET.validate(data)
    assert data["applied"] is ("--yes" in argv)  # each --yes case here changes an offset
