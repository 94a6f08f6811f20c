"""Every action kind of the registry (``kgitops.plan.actions.kinds``) has its entry in every
table kept per kind: a kind added to the registry but missed in one of them fails here, not
in a review or on a cluster.

The tables: the one list of kinds, ``kgitops.plan.kinds.ENTRIES`` (each kind's subject and
apply steps; ``ACCESS_KINDS``, ``ACCESS_PART`` and apply's step order derive from it); the
registry's own docstring table (order, symbol, kind); the plan JSON schema
(the ``type`` enum, one ``if``/``then`` per type, one ``$defs`` entry, one ``summary``
count); ``ACCESS_KINDS`` (exactly the kinds sent in an access API, those declaring ``api``);
apply's steps (some step asks the run for the kind's actions); verification (the
``isinstance`` chains of ``verify.differences`` for the topic kinds and of
``access.access_differences`` for the access kinds; ``verify.ACCESS_PART`` for the part of
the access an access kind is read back from).
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import textwrap
from collections.abc import Callable
from importlib import resources
from typing import Any

import pytest
from apply_fakes import FakeCluster

from kgitops.apply import access as apply_access
from kgitops.apply import run as apply_run
from kgitops.apply import verify
from kgitops.model import Broker, ReassignmentSettings
from kgitops.plan import actions
from kgitops.plan import kinds as kind_list
from kgitops.plan.actions import Action, kinds
from kgitops.plan.kinds import ACCESS_KINDS, ENTRIES, STEPS
from kgitops.plan.value import Plan

REGISTRY = {k.kind: k for k in kinds()}
ACCESS = {name for name, k in REGISTRY.items() if hasattr(k, "api")}
TOPIC = set(REGISTRY) - ACCESS


def _schema() -> dict[str, Any]:
    text = resources.files("kgitops").joinpath("schemas/plan.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def _isinstance_names(function: Callable[..., object]) -> set[str]:
    """The class names ``function`` tests its values against with ``isinstance``."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "isinstance":
            out |= {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
    return out


def test_the_registry_holds_topic_and_access_kinds() -> None:
    """The tables below are only as good as the registry they are compared with."""
    assert len(REGISTRY) >= 11
    assert {"create_topic", "delete_topic", "reassign"} <= TOPIC
    assert {"upsert_user", "create_acl"} <= ACCESS


def test_every_kind_has_one_entry_in_the_list_of_kinds_in_apply_order() -> None:
    assert [e.kind for e in ENTRIES] == [k.kind for k in kinds()]
    assert all(kind_list.entry(k).action is REGISTRY[k] for k in REGISTRY)


def test_each_entry_says_its_subject_and_an_access_kind_its_part() -> None:
    for e in ENTRIES:
        assert e.subject == ("access" if e.kind in ACCESS else "topic"), e.kind
        assert (e.access_part is not None) == (e.subject == "access"), e.kind
        assert e.steps, e.kind


def test_apply_runs_the_steps_of_the_entries_in_their_order() -> None:
    """Apply's step table has exactly the steps the entries name: a step added to an entry
    that apply does not know, or one apply runs that no kind names, fails here."""
    assert set(apply_run.STEP_FUNCTIONS) == set(STEPS)


def test_the_registry_docstring_table_lists_every_kind_with_its_order_and_symbol() -> None:
    assert actions.__doc__ is not None
    rows = re.findall(r"^\s+(\d+)\s+([+~-])\s+([a-z_]+)\s", actions.__doc__, re.MULTILINE)
    assert [(int(o), s, k) for o, s, k in rows] == [(k.order, k.symbol, k.kind) for k in kinds()]


def test_the_plan_schema_has_every_kind() -> None:
    schema = _schema()
    items = schema["properties"]["actions"]["items"]
    assert items["properties"]["type"]["enum"] == [k.kind for k in kinds()]
    branches = {b["if"]["properties"]["type"]["const"]: b["then"]["$ref"] for b in items["allOf"]}
    assert branches == {k: f"#/$defs/{k}" for k in REGISTRY}
    assert set(REGISTRY) <= set(schema["$defs"])
    assert list(schema["properties"]["summary"]["properties"]) == [k.kind for k in kinds()]


def test_access_kinds_are_exactly_those_sent_in_an_access_api() -> None:
    assert ACCESS_KINDS == ACCESS


def test_some_apply_step_asks_for_every_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    """Apply's steps (the tuple in ``apply_plan`` and the access step) each ask the run for
    their kinds' actions (``RunSeam.indexed``), even for an empty plan: together they must
    ask for every kind, or a plan holding the missed one would leave it not attempted."""
    asked: list[type[Action]] = []
    indexed = apply_run._Run.indexed

    def spy(self: Any, kind: type[Action], after_moves: bool = False) -> list[tuple[int, Any]]:
        asked.append(kind)
        return indexed(self, kind, after_moves)

    monkeypatch.setattr(apply_run._Run, "indexed", spy)
    settings = ReassignmentSettings(throttle_bytes_per_sec=1000, max_concurrent_moves=3)
    plan = Plan(cluster="test", state_fingerprint="sha256:x")
    apply_run.apply_plan(
        plan, FakeCluster(brokers=[Broker(1)]), settings, allow_delete=False, wait=False
    )
    assert {k.kind for k in asked} == set(REGISTRY)
    # in the order the registry gives (apply runs the kinds in ``order``); alter_config's
    # second step runs the changes a reassign must precede
    first = list(dict.fromkeys(k.kind for k in asked))
    assert first == [k.kind for k in kinds()]


def test_verification_checks_every_kind() -> None:
    assert _isinstance_names(verify.differences) >= {REGISTRY[k].__name__ for k in TOPIC}
    assert _isinstance_names(apply_access.access_differences) >= {
        REGISTRY[k].__name__ for k in ACCESS
    }
    assert set(verify.ACCESS_PART) == ACCESS
