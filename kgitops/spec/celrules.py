"""cluster.yaml ``policies.rules``: a platform team's own rules, as CEL expressions.

Each rule is an expression that is true when a topic is fine, a message, and a severity
(``error``, the default, or ``warn``)::

    policies:
      rules:
        - name: tier1-keeps-rf
          expression: '!(labels.tier == "1" && new.replicationFactor < old.replicationFactor)'
          message: a tier-1 topic never lowers its replication factor
          severity: error

What an expression sees, per topic (not those marked ``delete``):

* ``name`` and ``labels`` (a map of strings);
* ``topic``: the Topic document as written (``topic.config`` only what the file sets);
* ``new``: the effective values, after ``defaults:`` and profiles: ``name``, ``partitions``,
  ``replicationFactor``, ``config`` (a map of strings, as Kafka holds them), ``labels``;
* ``old``: the live topic (``partitions``, ``replicationFactor``, ``config``): only in
  ``plan``, and only for a topic the cluster has. A rule that reads ``old`` is checked by
  ``plan`` on changes; every other rule by ``validate`` (and so by plan and apply).

A rule that reads a label or config the topic does not have (CEL's "no such key") does not
apply to that topic: ``labels.tier == "1"`` says nothing about a topic without ``tier``.
A broken expression is one error at its position, e.g.
``cluster.yaml:12:23: error: policies.rules.0.expression: not a CEL expression: Syntax error:
token recognition error at: '= ' (column 13)``.

The expressions run on ``common-expression-language`` (the ``cel`` module: Python bindings
of the Rust CEL interpreter): a maintained, compiled implementation whose evaluation cannot
loop (CEL has no unbounded iteration) and whose parse errors carry a position.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kgitops.errors import Diagnostic, Mark, Severity
from kgitops.model import ClusterState, TopicSpec
from kgitops.spec.yamlload import Document

#: The variables a rule may read.
VARIABLES = ("name", "labels", "topic", "new", "old")

_POSITION = re.compile(r"<input>:(\d+):(\d+): (.*)")


@dataclass(frozen=True)
class Rule:
    """One compiled ``policies.rules`` entry."""

    name: str
    expression: str
    message: str
    severity: Severity
    program: Any  # cel.Program
    mark: Mark  # of the rule in cluster.yaml
    needs_live: bool  # reads ``old``: checked by plan on topics the cluster has


def compile_rules(cluster: Document, out: list[Diagnostic]) -> tuple[Rule, ...]:
    """The rules of cluster.yaml (schema-checked); an expression that does not compile, or
    reads a variable no rule has, is one error at its position."""
    policies = cluster.value.get("policies")
    raw = policies.get("rules") if isinstance(policies, dict) else None
    rules: list[Rule] = []
    if not raw:
        return ()
    import cel  # only for a cluster.yaml with rules

    for i, entry in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(entry, dict) or not isinstance(entry.get("expression"), str):
            continue
        where = f"policies.rules.{i}.expression"
        expression = entry["expression"]
        try:
            program = cel.compile(expression)
        except ValueError as exc:
            out.append(Diagnostic(cluster.mark(where), "error", f"{where}: {_parse_error(exc)}"))
            continue
        unknown = sorted(set(program.variables()) - set(VARIABLES))
        if unknown:
            out.append(
                Diagnostic(
                    cluster.mark(where),
                    "error",
                    f"{where}: unknown variable(s) {', '.join(unknown)}; a rule reads "
                    f"{', '.join(VARIABLES)}",
                )
            )
            continue
        rules.append(
            Rule(
                name=str(entry.get("name", f"rules.{i}")),
                expression=expression,
                message=str(entry.get("message", "")) or f"the rule {expression!r} is false",
                severity="warning" if entry.get("severity") == "warn" else "error",
                program=program,
                mark=cluster.mark(f"policies.rules.{i}"),
                needs_live="old" in program.variables(),
            )
        )
    return tuple(rules)


def _parse_error(exc: ValueError) -> str:
    """The first problem of the library's report, on one line, with its column."""
    for line in str(exc).splitlines():
        found = _POSITION.search(line)
        if found:
            return f"not a CEL expression: {found[3].strip()} (column {found[2]})"
    first = str(exc).splitlines()[0] if str(exc) else "cannot be compiled"
    return f"not a CEL expression: {first}"


def _plain(value: Any) -> Any:
    """A YAML value as CEL takes it (maps and lists of strings, numbers, booleans)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _effective(topic: TopicSpec) -> dict[str, Any]:
    return {
        "name": topic.name,
        "partitions": topic.partitions,
        "replicationFactor": topic.replication_factor,
        "config": dict(topic.config),
        "labels": dict(topic.labels),
    }


def evaluate(
    rules: Sequence[Rule],
    topics: Iterable[TopicSpec],
    written: Mapping[str, Any],
    state: ClusterState | None = None,
) -> list[tuple[str, Diagnostic]]:
    """(topic, finding) of every rule that is false for a topic. Without ``state`` (validate)
    the rules that do not read ``old``; with it (plan) those that do, on the topics the
    cluster has. Each finding is at the topic's name and cites the rule's position."""
    found: list[tuple[str, Diagnostic]] = []
    wanted = [rule for rule in rules if rule.needs_live == (state is not None)]
    if not wanted:  # no rule of this pass: no context to build (10,000 topics: 0.2 s)
        return found
    for topic in topics:
        if topic.delete:
            continue
        live = state.topics.get(topic.name) if state is not None else None
        if state is not None and live is None:
            continue  # every rule of this pass reads ``old``: none applies to a new topic
        context: dict[str, Any] = {
            "name": topic.name,
            "labels": dict(topic.labels),
            "topic": _plain(written.get(topic.name, {})),
            "new": _effective(topic),
        }
        if live is not None:
            context["old"] = {
                "name": live.name,
                "partitions": live.partition_count,
                "replicationFactor": live.replication_factor,
                "config": dict(live.config),
            }
        for rule in wanted:
            finding = _run(rule, context, topic)
            if finding is not None:
                found.append((topic.name, finding))
    return found


def _run(rule: Rule, context: Mapping[str, Any], topic: TopicSpec) -> Diagnostic | None:
    cited = f"(rule {rule.name} at {rule.mark})"
    try:
        result = rule.program.execute(dict(context))
    except KeyError:
        return None  # a label or config the topic lacks: the rule does not apply
    except (TypeError, ValueError, RuntimeError, ArithmeticError) as exc:  # 1/0, overflow
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return Diagnostic(
            topic.mark_of("name"),
            "error",
            f"topic {topic.name}: the rule cannot be evaluated: {reason} {cited}",
        )
    if not isinstance(result, bool):
        return Diagnostic(
            topic.mark_of("name"),
            "error",
            f"topic {topic.name}: the rule gave {type(result).__name__} {result!r}, not true "
            f"or false {cited}",
        )
    if result:
        return None
    return Diagnostic(topic.mark_of("name"), rule.severity, f"{rule.message} {cited}")
