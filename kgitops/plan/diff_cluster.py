"""What the plan says beyond the managed topics' own diff: unmanaged topics (a warning each,
or the PlanError of ``unmanagedTopics: error``), stale throttles to remove, and the load the
plan's moves and the writes put on the brokers (THROTTLE_BELOW_WRITE_RATE, ISR_PRESSURE).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kgitops.access import version_topic_problems
from kgitops.errors import PlanError
from kgitops.model import OWNER_TOPIC
from kgitops.names import is_internal_topic
from kgitops.plan.actions import Reassign, RemoveThrottles
from kgitops.plan.diff_context import Context, desired_config
from kgitops.plan.isrlag import Shrink, isr_pressure, lag_time_max
from kgitops.plan.isrlag import write_rates as topic_write_rates
from kgitops.plan.throttles import MoveThrottle, stale_throttles, throttle_pressure
from kgitops.units import human_bytes, human_rate, human_seconds


def warn_unmanaged(ctx: Context, managed: set[str]) -> None:
    policy = ctx.inputs.cluster.unmanaged_topics
    if policy == "ignore":
        return
    own = ctx.inputs.cluster.own_topics
    not_own: dict[str, list[str]] = {}  # named passwordVersionTopic, but not kgitops' shape
    for n in sorted(own & ctx.inputs.state.topics.keys()):
        t = ctx.inputs.state.topics[n]
        if problems := version_topic_problems(t.partition_count, t.config.get("cleanup.policy")):
            not_own[n] = problems
    owns = ctx.inputs.cluster.owns
    names = sorted(
        n
        for n in ctx.inputs.state.topics
        if n not in managed and (n in not_own or (not is_internal_topic(n, own) and owns.topic(n)))
    )
    if not names:
        return
    if policy == "error":
        shown = ", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")
        mark = ctx.inputs.cluster.mark_of("unmanagedTopics")
        raise PlanError(
            f"{mark}: error: {len(names)} live topic(s) are "
            f"not in git (unmanagedTopics: error): {shown}; add them with `kgitops import`"
        )
    for n in names:
        if n in not_own:
            ctx.warn(
                n,
                "UNMANAGED_TOPIC",
                (
                    "kgitops keeps its owner records in this topic (docs/ownership.md)"
                    if n == OWNER_TOPIC and n != ctx.inputs.cluster.password_version_topic
                    else "cluster.yaml's passwordVersionTopic names this topic"
                )
                + f", but it is not kgitops' ({'; '.join(not_own[n])}): another program's "
                "topic? kgitops will neither read nor write it; "
                + (
                    "rename or delete it"
                    if n == OWNER_TOPIC and n != ctx.inputs.cluster.password_version_topic
                    else "name a topic of kgitops' own"
                ),
            )
            continue
        ctx.warn(
            n,
            "UNMANAGED_TOPIC",
            "the topic exists on the cluster but not in git; kgitops leaves it alone "
            "(`kgitops import` adopts it)",
        )


def remove_stale_throttles(ctx: Context, record: Mapping[str, Any] | None) -> None:
    """Throttles are state: every throttle config no move in flight needs is removed (on a
    topic, unless another folder may own it: another team's topic is its own apply's to clean;
    Kafka's own topics and kgitops' records are no folder's, so every folder's)."""
    for s in stale_throttles(ctx.inputs.state, record=record):
        if s.broker is None and s.topic and ctx.someone_elses(s.topic):
            continue
        ctx.out.actions.append(RemoveThrottles(s.topic, s.broker, dict(s.keys), s.reason))


def warn_throttle_pressure(ctx: Context, write_rates: Mapping[str, float] | None) -> None:
    """THROTTLE_BELOW_WRITE_RATE: a broker whose in-sync replication of moving partitions
    approaches its throttle (``kgitops.plan.throttles.throttle_pressure``)."""
    settings = ctx.inputs.cluster.reassignment
    moves = [
        MoveThrottle(a.topic, p, m.source, m.adding)
        for a in ctx.out.actions
        if isinstance(a, Reassign)
        for p, m in a.moves.items()
    ]
    for pr in throttle_pressure(
        moves,
        ctx.inputs.state,
        settings.throttle_bytes_per_sec,
        settings.max_concurrent_moves,
        write_rates,
    ):
        how = (
            "at the write rates measured"
            if pr.measured
            else "at write rates estimated from partition sizes and retention.ms"
        )
        fate = (
            "new replicas never catch up"
            if pr.left <= 0
            else f"new replicas copy with what is left, {human_bytes(int(pr.left))}/s"
        )
        ctx.warn(
            "",
            "THROTTLE_BELOW_WRITE_RATE",
            f"broker {pr.broker}: the in-sync followers of the moving partitions it leads "
            f"({pr.partitions} at a time) take about {human_bytes(int(pr.in_sync))}/s of its "
            f"{human_rate(pr.rate)} throttle {how} (Kafka charges in-sync traffic of "
            f"throttled partitions to the quota): {fate}; raise throttleBytesPerSec above "
            f"{human_bytes(int(pr.in_sync * 1.25))}/s or lower maxConcurrentMoves",
            broker=pr.broker,
            inSyncBytesPerSec=round(pr.in_sync),
            throttleBytesPerSec=pr.rate,
            measured=pr.measured,
        )


def warn_isr_pressure(ctx: Context, measured: Mapping[str, float] | None) -> None:
    """ISR_PRESSURE: a written topic whose followers would fall out of the ISR, now or
    after the plan (``kgitops.plan.isrlag``: the rule the simulated cluster applies). Only
    where the network is known: a simulated cluster's ``networkBytesPerSec``. Every written
    topic loads the brokers; only the folder's own topics are warned about, and Kafka's own
    (``__consumer_offsets``...), which are nobody's, by every folder (``Context.someone_elses``)."""
    network = ctx.inputs.state.network_bytes_per_sec
    rates = topic_write_rates(ctx.inputs.specs.topics, measured)
    if network is None or not rates:
        return
    lag = lag_time_max(ctx.inputs.state.broker_defaults)
    specs = {t.name: t for t in ctx.inputs.specs.topics}
    found = isr_pressure(
        ctx.inputs.state, ctx.out.actions, {t: r for t, (r, _) in rates.items()}, network
    )
    for now, after in found:
        s = after or now
        assert s is not None
        if ctx.someone_elses(s.topic):
            continue  # another folder's topic: its writes count, its warning is its own
        when = (
            "now and after this plan"
            if now is not None and after is not None
            else "after this plan"
            if after is not None
            else "now, not after this plan"
        )
        spec = specs.get(s.topic)
        live = ctx.inputs.state.topics.get(s.topic)
        config = desired_config(spec) if spec is not None else live.config if live else {}
        min_isr = ctx.inputs.state.effective_min_isr(config, s.replicas)
        below = sorted(p for p, isr in s.isr.items() if len(isr) < min_isr)
        rate, source = rates[s.topic]
        ctx.warn(
            s.topic,
            "ISR_PRESSURE",
            _isr_pressure_message(s, rate, source, network, lag, when, min_isr, below),
            placement="both" if now is not None and after is not None else s.placement,
            rateBytesPerSec=round(rate),
            rateSource=source,
            networkBytesPerSec=round(network),
            lagTimeMaxMs=round(lag * 1000),
            brokers={str(b): round(d) for b, d in s.brokers.items()},
            isr={str(p): list(isr) for p, isr in sorted(s.isr.items())},
            minIsr=min_isr,
            belowMinIsr=len(below),
        )


def _isr_pressure_message(
    s: Shrink,
    rate: float,
    source: str,
    network: float,
    lag: float,
    when: str,
    min_isr: int,
    below: Sequence[int],
) -> str:
    origin = "expectedWriteBytesPerSec" if source == "spec" else "the rate `simulate produce` sends"
    (first, need), *rest = s.brokers.items()
    others = "".join(f", broker {b}: {human_rate(d)}" for b, d in rest)
    also = f" ({others[2:]})" if rest else ""
    shown = [f"{p} to {list(isr)}" for p, isr in sorted(s.isr.items())[:3]]
    more = f" and {len(s.isr) - 3} more" if len(s.isr) > 3 else ""
    if below:
        fate = (
            f"{len(below)} of them fall below min.insync.replicas {min_isr}: acks=all "
            "producers are refused there (NOT_ENOUGH_REPLICAS) until the followers catch up, "
            "and at this rate they fall behind again"
        )
    else:
        fate = f"min.insync.replicas {min_isr} is still met: acks=all writes go on"
    return (
        f"{when}: at {human_rate(rate)} of writes ({origin}), the in-sync followers on broker "
        f"{first} must fetch {human_rate(need)}{also}, counting every written topic, more than "
        f"the {human_rate(network)} network (the simulated cluster's networkBytesPerSec): "
        f"they fall behind and leave the ISR after "
        f"replica.lag.time.max.ms ({human_seconds(lag)}); the ISR of {len(s.isr)} of the "
        f"topic's {s.partitions} partitions shrinks (partition {', '.join(shown)}{more}); "
        f"{fate}"
    )
