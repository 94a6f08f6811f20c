"""apply_plan against an in-memory cluster: order, batching, throttles, faults, honesty."""

from __future__ import annotations

import pytest
from apply_fakes import FakeCluster

from kgitops.apply.journal import MoveJournal
from kgitops.apply.run import apply_plan
from kgitops.errors import (
    ClusterRequestError,
    ClusterUnreachable,
    DeletionNotAllowed,
    NothingApplied,
    PartialApply,
    StalePlan,
    Status,
)
from kgitops.model import Broker, ReassignmentSettings
from kgitops.names import (
    THROTTLE_FOLLOWER_RATE,
    THROTTLE_FOLLOWER_REPLICAS,
    THROTTLE_LEADER_RATE,
    THROTTLE_LEADER_REPLICAS,
)
from kgitops.plan.actions import (
    AddPartitions,
    AlterConfig,
    CreateTopic,
    DeleteTopic,
    ElectLeaders,
    Move,
    Reassign,
)
from kgitops.plan.throttles import parse_entries
from kgitops.plan.value import Plan

BROKERS = [Broker(i, f"r{i % 3}") for i in range(1, 7)]
SETTINGS = ReassignmentSettings(throttle_bytes_per_sec=1000, max_concurrent_moves=3)


def cluster() -> FakeCluster:
    fake = FakeCluster(brokers=list(BROKERS))
    fake.replicas["old"] = {0: (1, 2)}
    fake.replicas["a"] = {0: (1, 2), 1: (2, 3)}
    fake.configs["a"] = {"retention.ms": "1000"}
    return fake


def plan(*actions: object) -> Plan:
    return Plan(cluster="test", state_fingerprint="sha256:x", actions=tuple(actions))  # type: ignore[arg-type]


def mixed_plan() -> Plan:
    return plan(
        CreateTopic("n1", partitions=1, replication_factor=2, assignment={0: (1, 2)}),
        CreateTopic(
            "n2",
            partitions=2,
            replication_factor=1,
            assignment={0: (3,), 1: (4,)},
            config={"cleanup.policy": "compact"},
        ),
        AlterConfig("a", set={"retention.ms": "2000"}, delete=()),
        AddPartitions("a", from_count=2, to_count=3, assignment={2: (3, 4)}),
        DeleteTopic("old", partitions=1),
    )


def test_each_kind_is_one_batched_call_in_plan_order() -> None:
    fake = cluster()
    report = apply_plan(mixed_plan(), fake, SETTINGS, allow_delete=True)
    assert fake.writes() == [
        "create_topics",
        "alter_topic_configs",
        "create_partitions",
        "delete_topics",
    ]
    assert [n for n, p in fake.calls if n == "create_topics"] == ["create_topics"]
    assert fake.replicas["n2"] == {0: (3,), 1: (4,)}
    assert fake.configs["n2"] == {"cleanup.policy": "compact"}
    assert fake.configs["a"]["retention.ms"] == "2000"
    assert fake.replicas["a"][2] == (3, 4)
    assert "old" not in fake.replicas
    assert all(o.done for o in report.outcomes) and len(report.outcomes) == 5


def test_deletion_is_refused_without_allow_delete_before_anything_is_sent() -> None:
    fake = cluster()
    with pytest.raises(DeletionNotAllowed) as err:
        apply_plan(mixed_plan(), fake, SETTINGS, allow_delete=False)
    assert fake.calls == []
    assert any("old" in r for r in err.value.reasons)


def test_dry_run_prints_exactly_the_requests_a_real_run_sends_and_sends_none() -> None:
    dry_fake, real_fake = cluster(), cluster()
    dry = apply_plan(mixed_plan(), dry_fake, SETTINGS, allow_delete=True, dry_run=True)
    real = apply_plan(mixed_plan(), real_fake, SETTINGS, allow_delete=True)
    assert dry_fake.writes() == []
    assert dry.requests == real.requests
    assert dry.requests[0].startswith('CreateTopics [{"assignment":{"0":[1,2]}')
    assert dry.lines()[-1] == "dry run: 4 change request(s), none sent"


def moves_plan(n: int, *, topic: str = "m", size: int = 5000) -> tuple[FakeCluster, Plan]:
    fake = cluster()
    fake.replicas[topic] = {p: (1, 2) for p in range(n)}
    for p in range(n):
        fake.sizes[(topic, p)] = size
    fake.speed = 1000
    moves = {p: Move(source=(1, 2), target=(3, 1, 2), size_bytes=size) for p in range(n)}
    return fake, plan(Reassign(topic, moves=moves))


def test_reassignment_throttles_exactly_the_brokers_and_replicas_involved_then_removes_them() -> (
    None
):
    fake, p = moves_plan(2)
    fake.configs["m"] = {THROTTLE_LEADER_REPLICAS: "7:5"}  # another writer's entry: APPEND keeps it
    seen: list[tuple[dict[int, dict[str, str]], dict[str, str]]] = []
    fake.on_sleep = lambda f: seen.append(
        ({b: dict(c) for b, c in f.broker_configs.items()}, dict(f.configs["m"]))
    )
    apply_plan(p, fake, SETTINGS, allow_delete=False, poll_seconds=1)
    brokers, topic = seen[0]
    assert sorted(b for b, c in brokers.items() if c) == [1, 2, 3]
    assert brokers[3] == {THROTTLE_LEADER_RATE: "1000", THROTTLE_FOLLOWER_RATE: "1000"}
    assert topic[THROTTLE_LEADER_REPLICAS] == "7:5,0:1,0:2,1:1,1:2"  # APPEND adds at the end
    assert topic[THROTTLE_FOLLOWER_REPLICAS] == "0:3,1:3"
    assert fake.configs["m"] == {THROTTLE_LEADER_REPLICAS: "7:5"}
    assert all(not c for c in fake.broker_configs.values())
    assert fake.replicas["m"] == {0: (3, 1, 2), 1: (3, 1, 2)}


def test_no_more_than_max_concurrent_moves_are_in_flight_and_all_finish() -> None:
    fake, p = moves_plan(10)
    report = apply_plan(p, fake, SETTINGS, allow_delete=False, poll_seconds=1)
    assert fake.max_in_flight == 3
    assert all(r == (3, 1, 2) for r in fake.replicas["m"].values())
    assert report.outcomes[0].done and "10 partition(s) moved" in report.outcomes[0].detail


def test_moved_partitions_left_off_their_preferred_leader_get_it_elected() -> None:
    fake, p = moves_plan(2)
    apply_plan(p, fake, SETTINGS, allow_delete=False, poll_seconds=1)
    elected = [payload for n, payload in fake.calls if n == "elect_preferred_leaders"]
    assert elected == [[("m", 0), ("m", 1)]]


def test_a_move_already_in_flight_to_the_same_target_is_waited_for_not_submitted_again() -> None:
    fake, p = moves_plan(2)
    fake.alter_reassignments({("m", 0): (3, 1, 2)})
    journal = MoveJournal(moves={("m", 0): (3, 1, 2)})  # an earlier apply started it
    fake.calls.clear()
    apply_plan(p, fake, SETTINGS, allow_delete=False, poll_seconds=1, journal=journal)
    submitted = [payload for n, payload in fake.calls if n == "alter_reassignments"]
    assert submitted == [{("m", 1): (3, 1, 2)}]
    assert fake.replicas["m"] == {0: (3, 1, 2), 1: (3, 1, 2)}


def test_a_failed_create_stops_only_its_own_topic() -> None:
    fake = cluster()
    fake.refuse["n1"] = ClusterRequestError("Invalid config", "INVALID_CONFIG", "n1")
    p = plan(
        CreateTopic("n1", partitions=1, replication_factor=2, assignment={0: (1, 2)}),
        AlterConfig("a", set={"retention.ms": "5"}),
        ElectLeaders("n1", partitions=(0,)),
    )
    with pytest.raises(PartialApply) as err:
        apply_plan(p, fake, SETTINGS, allow_delete=False)
    assert err.value.exit_code == 3
    lines = err.value.lines()
    assert "  NOT done: + create_topic n1 (failed: Invalid config)" in lines
    assert "  done: ~ alter_config a" in lines
    assert any("elect_leaders n1 (skipped" in line for line in lines)
    assert fake.configs["a"]["retention.ms"] == "5"


def test_broker_failing_mid_reassignment_cancels_its_moves_and_removes_throttles() -> None:
    fake = cluster()
    fake.speed = 1000
    fake.replicas["m"] = {0: (1, 2), 1: (1, 2)}
    fake.sizes.update({("m", 0): 10_000, ("m", 1): 3000})
    moves = {
        0: Move((1, 2), (1, 2, 4), size_bytes=10_000),
        1: Move((1, 2), (1, 2, 5), size_bytes=3000),
    }

    def fail(f: FakeCluster) -> None:
        if f.clock >= 2:
            f.fail_broker(4)

    fake.on_sleep = fail
    with pytest.raises(PartialApply) as err:
        apply_plan(
            plan(Reassign("m", moves=moves)), fake, SETTINGS, allow_delete=False, poll_seconds=1
        )
    assert err.value.exit_code == 3
    assert fake.replicas["m"] == {0: (1, 2), 1: (1, 2, 5)}
    assert fake.flights == {}
    assert all(not c for c in fake.broker_configs.values())
    assert not any(
        k in fake.configs["m"] for k in (THROTTLE_LEADER_REPLICAS, THROTTLE_FOLLOWER_REPLICAS)
    )
    text = "\n".join(err.value.lines())
    assert (
        "partition 0: broker(s) [4] went offline during the move; cancelled, back to [1, 2]" in text
    )


def test_a_timeout_cancels_what_is_in_flight_and_removes_throttles() -> None:
    fake, p = moves_plan(5, size=1_000_000)
    settings = ReassignmentSettings(
        throttle_bytes_per_sec=1000, max_concurrent_moves=2, timeout_seconds=10
    )
    with pytest.raises(PartialApply) as err:
        apply_plan(p, fake, settings, allow_delete=False, poll_seconds=1)
    assert fake.flights == {} and fake.clock == 10
    assert all(r == (1, 2) for r in fake.replicas["m"].values())
    assert all(not c for c in fake.broker_configs.values())
    assert "timed out after 10s" in "\n".join(err.value.lines())


def test_ctrl_c_during_the_wait_cancels_removes_throttles_and_reports() -> None:
    fake, p = moves_plan(2, size=1_000_000)

    def interrupt(f: FakeCluster) -> None:
        raise KeyboardInterrupt

    fake.on_sleep = interrupt
    with pytest.raises(PartialApply) as err:
        apply_plan(p, fake, SETTINGS, allow_delete=False, poll_seconds=1)
    assert err.value.exit_code == 3  # moves were submitted (then cancelled): not "nothing"
    assert fake.flights == {}
    assert all(not c for c in fake.broker_configs.values())
    assert "interrupted (Ctrl-C)" in "\n".join(err.value.lines())


def test_losing_the_cluster_mid_apply_reports_what_was_done_and_what_was_not() -> None:
    fake = cluster()
    real_create = fake.create_topics

    def create_then_die(topics):  # type: ignore[no-untyped-def]
        out = real_create(topics)
        fake.down = True
        return out

    fake.create_topics = create_then_die  # type: ignore[method-assign]
    with pytest.raises(PartialApply) as err:
        apply_plan(mixed_plan(), fake, SETTINGS, allow_delete=True)
    assert err.value.exit_code == 3
    lines = err.value.lines()
    assert "  done: + create_topic n1" in lines
    assert any(
        line.startswith("  NOT done: ~ alter_config a (failed: cannot reach") for line in lines
    )
    assert any(
        line.startswith("  NOT done: - delete_topic old (not attempted: cannot reach")
        for line in lines
    )
    assert "old" in fake.replicas


def test_an_unreachable_cluster_from_the_start_is_exit_1() -> None:
    fake = cluster()
    fake.down = True
    with pytest.raises(NothingApplied) as err:
        apply_plan(mixed_plan(), fake, SETTINGS, allow_delete=True)
    assert err.value.exit_code == 1
    head = err.value.lines()[0]
    assert head.startswith("error: apply changed nothing: lost the cluster: "), head
    assert "partly" not in "\n".join(err.value.lines())


def test_no_wait_leaves_moves_running_with_throttles_and_a_later_apply_finishes_them() -> None:
    fake, p = moves_plan(3, size=10_000)
    journal = MoveJournal()  # what the cluster folder's record keeps between the two runs
    report = apply_plan(
        p, fake, SETTINGS, allow_delete=False, wait=False, poll_seconds=1, journal=journal
    )
    assert len(fake.flights) == 3
    assert fake.broker_configs[3][THROTTLE_LEADER_RATE] == "1000"
    assert any("--no-wait" in n for n in report.notes)
    assert report.outcomes[0].status is Status.IN_FLIGHT
    assert report.outcomes[0].items[0] == "partition 0 moving to [3, 1, 2]"
    fake.calls.clear()
    apply_plan(p, fake, SETTINGS, allow_delete=False, poll_seconds=1, journal=journal)
    assert [n for n, _ in fake.calls if n == "alter_reassignments"] == []
    assert all(r == (3, 1, 2) for r in fake.replicas["m"].values())
    assert all(not c for c in fake.broker_configs.values())
    assert not any(
        k in fake.configs.get("m", {})
        for k in (THROTTLE_LEADER_REPLICAS, THROTTLE_FOLLOWER_REPLICAS)
    )


def test_no_wait_submits_one_window_and_defers_the_rest_in_one_line_per_topic() -> None:
    fake, p = moves_plan(4, size=10_000)
    journal = MoveJournal()
    with pytest.raises(PartialApply) as err:
        apply_plan(
            p, fake, SETTINGS, allow_delete=False, wait=False, poll_seconds=1, journal=journal
        )
    assert err.value.exit_code == 3
    assert len(fake.flights) == 3
    (outcome,) = err.value.outcomes
    assert outcome.status is Status.DEFERRED
    lines = err.value.lines()
    assert lines[0] == (
        "error: apply finished partly: moves of 1 topic(s) deferred to the next "
        "`kgitops apply` (--no-wait)"
    )
    assert lines[1] == (
        "  deferred: ~ reassign m (1 partition(s) left for the next `kgitops apply`: "
        "--no-wait submits one window of 3; 3 moving now)"
    )
    assert lines[2:5] == [f"      partition {n} moving to [3, 1, 2]" for n in range(3)]
    text = "\n".join(lines)
    assert "NOT done" not in text and "failed" not in text and "not submitted" not in text
    assert fake.configs["m"][THROTTLE_FOLLOWER_REPLICAS] == "0:3,1:3,2:3"  # only the submitted ones
    fake.calls.clear()
    apply_plan(p, fake, SETTINGS, allow_delete=False, poll_seconds=1, journal=journal)
    submitted = [payload for n, payload in fake.calls if n == "alter_reassignments"]
    assert submitted == [{("m", 3): (3, 1, 2)}]
    assert all(r == (3, 1, 2) for r in fake.replicas["m"].values())
    assert all(not c for c in fake.broker_configs.values())
    assert not any(
        k in fake.configs.get("m", {})
        for k in (THROTTLE_LEADER_REPLICAS, THROTTLE_FOLLOWER_REPLICAS)
    )


def test_an_effect_the_cluster_does_not_show_is_an_error() -> None:
    fake = cluster()
    real_alter = fake.alter_topic_configs

    def ignore_values(changes):  # type: ignore[no-untyped-def]
        return {t: None for t in changes} if changes else real_alter(changes)

    fake.alter_topic_configs = ignore_values  # type: ignore[method-assign]
    with pytest.raises(PartialApply) as err:
        apply_plan(
            plan(AlterConfig("a", set={"retention.ms": "9"})), fake, SETTINGS, allow_delete=False
        )
    assert "verification: config retention.ms='1000', the plan said '9'" in "\n".join(
        err.value.lines()
    )


def test_a_stale_plan_is_refused_naming_the_topic_that_changed() -> None:
    from kgitops.plan.fingerprint import state_fingerprint

    fake = cluster()
    before = fake.describe()
    fp, digests = state_fingerprint(before, ["a", "n1"])
    p = Plan("test", fp, (AlterConfig("a", set={"retention.ms": "9"}),), state_digests=digests)
    p.raise_if_stale(before)
    fake.replicas["a"][0] = (4, 5)
    with pytest.raises(StalePlan) as err:
        p.raise_if_stale(fake.describe())
    assert err.value.changes == ["topic a: its replicas or configs changed since the plan was made"]


def test_ctrl_c_while_a_request_is_in_flight_says_it_may_have_taken_effect() -> None:
    fake = cluster()

    def interrupted(topics):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt

    fake.alter_topic_configs = interrupted  # type: ignore[method-assign]
    with pytest.raises(PartialApply) as err:
        apply_plan(mixed_plan(), fake, SETTINGS, allow_delete=True)
    text = "\n".join(err.value.lines())
    assert err.value.exit_code == 3
    assert "  done: + create_topic n1" in text
    assert (
        "NOT done: ~ alter_config a (in doubt: interrupted (Ctrl-C) while the request was in "
        "flight: it may have taken effect; a new plan shows)"
    ) in text
    assert "NOT done: - delete_topic old (not attempted: interrupted (Ctrl-C))" in text
    assert "old" in fake.replicas


def test_a_dry_run_that_cannot_read_the_cluster_fails_instead_of_printing_half() -> None:
    fake, p = moves_plan(2)
    fake.down = True
    with pytest.raises(ClusterUnreachable):
        apply_plan(p, fake, SETTINGS, allow_delete=False, dry_run=True)


def test_throttles_are_kgitops_own_a_broker_rate_found_is_replaced_and_said_so() -> None:
    fake, p = moves_plan(1)
    fake.broker_configs[3] = {THROTTLE_LEADER_RATE: "500"}
    report = apply_plan(p, fake, SETTINGS, allow_delete=False, poll_seconds=1)
    assert fake.broker_configs[3] == {}
    assert f"note: broker 3 had {THROTTLE_LEADER_RATE}=500; set to 1000" in report.notes


def test_a_dry_run_shows_append_and_subtract_per_window_and_sends_nothing() -> None:
    fake, p = moves_plan(4)
    fake.configs["m"] = {THROTTLE_FOLLOWER_REPLICAS: "7:5"}
    report = apply_plan(p, fake, SETTINGS, allow_delete=False, dry_run=True)
    topic_lines = [r for r in report.requests if r.startswith("IncrementalAlterConfigs topics")]
    assert topic_lines == [
        'IncrementalAlterConfigs topics {"m":{"append":{"follower.replication.throttled.replicas":'
        '"0:3,1:3,2:3","leader.replication.throttled.replicas":"0:1,0:2,1:1,1:2,2:1,2:2"}}}',
        'IncrementalAlterConfigs topics {"m":{"subtract":{'
        '"follower.replication.throttled.replicas":"0:3,1:3,2:3","leader.replication.throttled.replicas":"0:1,0:2,1:1,1:2,2:1,2:2"}}}',
        'IncrementalAlterConfigs topics {"m":{"append":{"follower.replication.throttled.replicas":'
        '"3:3","leader.replication.throttled.replicas":"3:1,3:2"}}}',
        'IncrementalAlterConfigs topics {"m":{"subtract":{'
        '"follower.replication.throttled.replicas":"3:3","leader.replication.throttled.replicas":"3:1,3:2"}}}',
        'IncrementalAlterConfigs topics {"m":{"delete":["leader.replication.throttled.replicas"]}}',
    ]
    assert fake.writes() == []


def test_an_unexpected_error_mid_wait_still_cancels_the_moves_and_removes_throttles() -> None:
    fake, p = moves_plan(2, size=1_000_000)

    def bug(f: FakeCluster) -> None:
        raise RuntimeError("a bug")

    fake.on_sleep = bug
    with pytest.raises(RuntimeError):
        apply_plan(p, fake, SETTINGS, allow_delete=False, poll_seconds=1)
    assert fake.flights == {}
    assert all(not c for c in fake.broker_configs.values())
    assert not any(
        k in fake.configs["m"] for k in (THROTTLE_LEADER_REPLICAS, THROTTLE_FOLLOWER_REPLICAS)
    )


def test_the_exit_is_decided_by_statuses_never_by_the_words_of_a_reason() -> None:
    from kgitops.apply.run import ApplyReport
    from kgitops.errors import ActionOutcome

    running = ActionOutcome("~ reassign a", Status.IN_FLIGHT, "reworded: still copying")
    worded_like_running = ActionOutcome("~ reassign b", Status.FAILED, "in flight: not really")
    assert ApplyReport(outcomes=[running]).complete
    assert not ApplyReport(outcomes=[running, worded_like_running]).complete


def test_a_long_not_done_list_is_one_line_per_partition_capped_with_a_count() -> None:
    from kgitops.errors import ActionOutcome

    items = tuple(f"partition {p}: timed out; cancelled" for p in range(40))
    lines = ActionOutcome("~ reassign a", Status.FAILED, "40 partition(s) not moved", items).lines()
    assert lines[0] == "NOT done: ~ reassign a (failed: 40 partition(s) not moved)"
    assert lines[1:11] == [f"    {i}" for i in items[:10]]
    assert lines[11:] == ["    ... and 30 more"]
    assert max(len(line) for line in lines) < 100


def test_only_the_partitions_in_the_window_are_throttled_at_any_time() -> None:
    fake, p = moves_plan(10)
    seen: list[tuple[set[int], set[int]]] = []

    def look(f: FakeCluster) -> None:
        value = f.configs.get("m", {}).get(THROTTLE_FOLLOWER_REPLICAS)
        entries = parse_entries(value) or frozenset()
        seen.append(({part for part, _ in entries}, {part for _, part in f.flights}))

    fake.on_sleep = look
    apply_plan(p, fake, SETTINGS, allow_delete=False, poll_seconds=1)
    assert len(seen) > 3
    for throttled, flying in seen:
        # a partition that completed during the sleep is still listed until the next poll
        assert flying <= throttled and len(throttled) <= SETTINGS.max_concurrent_moves
    assert THROTTLE_FOLLOWER_REPLICAS not in fake.configs["m"]
