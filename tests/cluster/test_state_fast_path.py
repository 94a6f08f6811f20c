"""``read_state`` decodes a state file with msgspec into typed records (the fast path) and
sends anything it does not accept to the standard decoder and the thorough checker (the slow
path). Both must give the same state, or the same error, for any file: another program's key
order, fields kgitops does not know, numbers the standard path refuses, bad bytes."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from kgitops.cluster import snapshot, statefast
from kgitops.errors import StateFileError

BASE = (
    '{"format": "kgitops-state/v1", "brokers": [{"id": 1, "rack": "a"}, {"id": 2, "rack": "b"}],'
    ' "topics": {"t": {"partitions": {"0": {"replicas": [1, 2], "isr": [1, 2], "leader": 1,'
    ' "sizeBytes": 5}, "1": {"replicas": [2, 1], "isr": [2], "leader": 2}},'
    ' "config": {"retention.ms": "1000"}}}%s}'
)

CASES = {
    "plain": BASE % "",
    "simulation clock": BASE % ', "simulation": {"clock": 1.5}',
    "NaN in an unknown field": BASE % ', "x": NaN',
    "a 5,000-digit integer in an unknown field": BASE % (', "x": ' + "9" * 5000),
    "an infinite float in an unknown field": BASE % ', "x": 1e999',
    "an infinite clock": BASE % ', "simulation": {"clock": 1e999}',
    "an unknown partition field": BASE.replace('"leader": 2}', '"leader": 2, "x": 1}') % "",
    "a lone surrogate": BASE % ', "x": "\\ud800"',
    "the format twice": BASE % ', "format": "other"',
    "a boolean broker id": BASE.replace('"id": 1', '"id": true') % "",
    "a float broker id": BASE.replace('"id": 1', '"id": 1.0') % "",
    "a float size": BASE.replace('"sizeBytes": 5', '"sizeBytes": 5.0') % "",
    "a boolean replica": BASE.replace('"replicas": [1, 2]', '"replicas": [true, 2]') % "",
    "a size past 64 bits": BASE.replace('"sizeBytes": 5', '"sizeBytes": ' + "9" * 30) % "",
    "a negative size": BASE.replace('"sizeBytes": 5', '"sizeBytes": -1') % "",
    "leader -1": BASE.replace('"leader": 1', '"leader": -1') % "",
    "a leader outside the replicas": BASE.replace('"leader": 1', '"leader": 7') % "",
    "an ISR outside the replicas": BASE.replace('"isr": [2]', '"isr": [3]') % "",
    "a repeated replica": BASE.replace('"replicas": [2, 1]', '"replicas": [2, 2]') % "",
    "a gap in partitions": BASE.replace('"1": {', '"2": {') % "",
    "partition 01": BASE.replace('"1": {', '"01": {') % "",
    "null topics": '{"format": "kgitops-state/v1", "brokers": [], "topics": null}',
    "an illegal topic name": BASE.replace('"t": {', '"a b": {') % "",
    "deep nesting": BASE % (', "x": ' + "[" * 300 + "]" * 300),
    "a BOM": "\ufeff" + BASE % "",
    "a NUL byte": BASE % "" + "\x00",
    "trailing data": BASE % "" + " {}",
    "duplicate broker ids": BASE.replace('"id": 2', '"id": 1') % "",
    "a topic without partitions": BASE.replace('"t": {', '"e": {"partitions": {}}, "t": {') % "",
}


def _slow(raw: bytes, path: str) -> object:
    try:
        text, data = snapshot._parsed(raw, path)
        return snapshot.state_from_json(data, path, text)
    except StateFileError as exc:
        return f"error: {exc}"


def _read(path: str) -> object:
    try:
        return snapshot.read_state(path)
    except StateFileError as exc:
        return f"error: {exc}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_fast_path_agrees_with_the_slow_path(tmp_path: Path, case: str) -> None:
    raw = CASES[case].encode("utf-8")
    path = tmp_path / "state.json"
    path.write_bytes(raw)
    assert _read(str(path)) == _slow(raw, str(path))


def test_bad_utf8_is_refused_as_the_slow_path_refuses_it(tmp_path: Path) -> None:
    raw = (BASE % "").encode().replace(b'"1000"', b'"\xff"')
    path = tmp_path / "state.json"
    path.write_bytes(raw)
    got = _read(str(path))
    assert got == _slow(raw, str(path))
    assert "not UTF-8 text (byte 0xff)" in str(got)


def test_another_programs_key_order_loads_the_same_state(tmp_path: Path) -> None:
    rng = random.Random(7)
    state = json.loads(BASE % ', "clusterId": "c", "controllerId": 1')
    expected = snapshot.state_from_json(json.loads(json.dumps(state)))

    def shuffled(value: object) -> object:
        if isinstance(value, dict):
            items = list(value.items())
            rng.shuffle(items)
            return {k: shuffled(v) for k, v in items}
        if isinstance(value, list):
            return [shuffled(v) for v in value]
        return value

    for i in range(20):
        path = tmp_path / f"state{i}.json"
        path.write_text(json.dumps(shuffled(state), separators=(",", ":")))
        assert snapshot.read_state(str(path)) == expected
        # and on the fast path, not a fallback
        assert statefast.typed_load(statefast.DECODER.decode(path.read_bytes())) == expected


def test_the_rows_are_unpacked_into_columns_in_field_order() -> None:
    """The load transposes each row (``msgspec.structs.astuple``) into the columns replicas,
    ISR, leaders, sizes, in that order: the order of the record's fields."""
    assert statefast._Partition.__struct_fields__ == ("replicas", "isr", "leader", "size_bytes")
