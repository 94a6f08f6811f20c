"""The key analysis on a plan's KEY_REMAP warnings: what share of keys and messages move to
another partition when a keyed topic's partition count changes. Pure: the report comes from
a ``KeyReport`` the shell passes in (``kgitops.analytics.api.key_report`` on the topic's key
sample, which runs Spark); this module only picks the figures and words the warning::

    KEY_REMAP payments.orders: partitions 6 -> 12: keyed messages map to other partitions
    from now on (...); in the key sample 50.0% of keys and 48.3% of messages move to
    another partition

(data: keyShare, messageShare, sample, and loadBefore/loadAfter: messages per partition).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from kgitops.errors import KgitopsError
from kgitops.model import TopicSpec
from kgitops.plan.value import Plan, PlanWarning

#: ``report(spec, old, new)``: the key report of the topic's key sample for partition counts
#: ``old`` and ``new`` (``kgitops.analytics.api.key_report``'s JSON); raises ImportError when
#: the analysis cannot run here (no Spark), KgitopsError when it fails.
KeyReport = Callable[[TopicSpec, int, int], Mapping[str, Any]]


def with_key_analysis(plan: Plan, topics: Sequence[TopicSpec], report: KeyReport) -> Plan:
    """``plan`` with the key analysis added to the KEY_REMAP warnings of topics whose spec has
    a key sample; ``report`` runs only for those."""
    by_name = {t.name: t for t in topics}
    wanted = [
        w for w in plan.warnings if w.code == "KEY_REMAP" and by_name[w.topic].keys is not None
    ]
    if not wanted:
        return plan
    done = {id(w): _analysed(w, by_name[w.topic], report) for w in wanted}
    return replace(plan, warnings=tuple(done.get(id(w), w) for w in plan.warnings))


def _analysed(w: PlanWarning, spec: TopicSpec, report: KeyReport) -> PlanWarning:
    assert spec.keys is not None
    old, new = int(w.data["from"]), int(w.data["to"])
    data: dict[str, Any] = dict(w.data)
    try:
        figures = report(spec, old, new)
        move = _move(figures, old, new)
    except ImportError as exc:
        data["analysis"] = f"unavailable: {exc}"
        return replace(w, message=w.message + "; key analysis unavailable", data=data)
    except KgitopsError as exc:
        data["analysis"] = f"failed: {exc}"
        return replace(w, message=f"{w.message}; key analysis failed: {exc}", data=data)
    if move is None:
        data["analysis"] = "the report has no figures for this change"
        return replace(w, data=data)
    key_share, msg_share = float(move["keyShare"]), float(move["messageShare"])
    data.update(keyShare=key_share, messageShare=msg_share, sample=spec.keys.sample)
    counts = figures.get("partitionCounts", {})
    if str(old) in counts and str(new) in counts:
        data.update(
            loadBefore=[int(x) for x in counts[str(old)]["messages"]],
            loadAfter=[int(x) for x in counts[str(new)]["messages"]],
        )
    return replace(
        w,
        message=f"{w.message}; in the key sample {key_share:.1%} of keys and "
        f"{msg_share:.1%} of messages move to another partition",
        data=data,
    )


def _move(report: Mapping[str, Any], old: int, new: int) -> Mapping[str, Any] | None:
    for m in report.get("moves", []):
        if int(m.get("from", -1)) == old and int(m.get("to", -1)) == new:
            return dict(m)
    return None
