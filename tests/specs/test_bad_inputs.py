"""The corpus of bad inputs: each states a rule and the exact line kgitops prints for it.

Positions are 1-based ``line:col`` of the offending value (or key, for unknown and duplicate
keys), as editors count them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kgitops.model import Broker

from .conftest import CLUSTER, TOPIC, Problems

# ------------------------------------------------------------ YAML itself


def test_a_tab_in_indentation_is_an_error_at_the_tab(problems: Problems) -> None:
    text = "apiVersion: kgitops/v1\nkind: Topic\nconfig:\n\tretention.ms: 1\n"
    assert problems({"a.yaml": text}) == [
        "a.yaml:4:1: error: a tab character: YAML indentation must use spaces"
    ]


def test_an_empty_file_is_an_error(problems: Problems) -> None:
    assert problems({"a.yaml": ""}) == ["a.yaml:1:1: error: an empty file: no YAML document in it"]


def test_a_file_of_comments_only_is_an_empty_file(problems: Problems) -> None:
    assert problems({"a.yaml": "# nothing yet\n\n"}) == [
        "a.yaml:1:1: error: an empty file: no YAML document in it"
    ]


def test_a_binary_file_is_an_error_at_its_first_nul_byte(problems: Problems) -> None:
    assert problems({"a.yaml": b"\x89PNG\r\n\x1a\n\x00\x00"}) == [
        "a.yaml:3:1: error: a binary file (NUL byte), not YAML text"
    ]


def test_text_that_is_not_utf8_is_an_error_at_the_bad_byte(problems: Problems) -> None:
    assert problems({"a.yaml": b"name: caf\xe9\n"}) == [
        "a.yaml:1:10: error: not UTF-8 text (byte 0xe9); save the file as UTF-8"
    ]


def test_an_unclosed_flow_list_is_malformed_yaml(problems: Problems) -> None:
    assert problems({"a.yaml": "name: [a, b\nkind: Topic\n"}) == [
        "a.yaml:2:5: error: invalid YAML: did not find expected ',' or ']' "
        "(while parsing a flow sequence)"
    ]


def test_bad_indentation_is_malformed_yaml(problems: Problems) -> None:
    text = "apiVersion: kgitops/v1\n  kind: Topic\n"
    assert problems({"a.yaml": text}) == [
        "a.yaml:2:7: error: invalid YAML: mapping values are not allowed in this context"
    ]


def test_a_key_given_twice_in_one_mapping_is_an_error_at_the_second(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "partitions: 4\n"}) == [
        "a.yaml:6:1: error: duplicate key 'partitions' (first defined at line 4)"
    ]


def test_a_duplicate_key_does_not_hide_the_other_errors_of_the_document(
    problems: Problems,
) -> None:
    text = TOPIC.replace("partitions: 3", "partitions: 0") + "config:\n  x: 1\n  x: 2\n"
    assert problems({"a.yaml": text}) == [
        "a.yaml:4:13: error: partitions must be at least 1, not 0",
        "a.yaml:7:3: error: unknown topic config 'x'",
        "a.yaml:8:3: error: duplicate key 'x' (first defined at line 7)",
    ]


def test_a_duplicate_key_inside_config_is_an_error(problems: Problems) -> None:
    text = TOPIC + "config:\n  retention.ms: 1000\n  retention.ms: 2000\n"
    assert problems({"a.yaml": text}) == [
        "a.yaml:8:3: error: duplicate key 'retention.ms' (first defined at line 7)"
    ]


def test_merge_keys_are_refused(problems: Problems) -> None:
    assert problems({"a.yaml": "<<: {partitions: 3}\n"}) == [
        "a.yaml:1:1: error: merge keys (<<) are not supported; write the fields"
    ]


def test_a_recursive_alias_is_an_error(problems: Problems) -> None:
    assert problems({"a.yaml": "x: &a [*a]\n"}) == [
        "a.yaml:1:4: error: a recursive alias (an anchor used inside itself)"
    ]


def test_a_custom_tag_is_an_error(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "description: !vault secret\n"}) == [
        "a.yaml:6:14: error: unsupported YAML tag '!vault'"
    ]


def test_documents_before_a_syntax_error_are_still_checked(problems: Problems) -> None:
    text = TOPIC.replace("partitions: 3", "partitions: 0") + "---\nname: [\n"
    assert problems({"a.yaml": text}) == [
        "a.yaml:4:13: error: partitions must be at least 1, not 0",
        "a.yaml:8:1: error: invalid YAML: did not find expected node content "
        "(while parsing a flow node)",
    ]


# ------------------------------------------------------------ documents and schema


def test_a_document_must_be_a_mapping(problems: Problems) -> None:
    assert problems({"a.yaml": "- a\n- b\n"}) == [
        "a.yaml:1:1: error: a document must be a mapping with apiVersion, kind and its fields, "
        "not a list"
    ]


def test_a_document_needs_a_kind(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC.replace("kind: Topic\n", "")}) == [
        "a.yaml:1:1: error: missing required field 'kind' (Topic, Cluster, ACL, User or Quota)"
    ]


def test_an_unknown_kind_suggests_the_closest(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC.replace("kind: Topic", "kind: Topc")}) == [
        "a.yaml:2:7: error: unknown kind 'Topc': expected Topic, Cluster, ACL, User, Quota "
        "(did you mean 'Topic'?)"
    ]


def test_the_api_version_must_be_kgitops_v1(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC.replace("kgitops/v1", "kgitops/v2")}) == [
        "a.yaml:1:13: error: apiVersion must be 'kgitops/v1', not 'kgitops/v2'"
    ]


def test_a_misspelt_field_is_unknown_and_the_real_one_missing(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC.replace("partitions:", "partitons:")}) == [
        "a.yaml:1:1: error: missing required field 'partitions'",
        "a.yaml:4:1: error: unknown field 'partitons' (did you mean 'partitions'?)",
    ]


def test_a_field_named_as_other_tools_name_it_suggests_ours(problems: Problems) -> None:
    text = TOPIC.replace("replicationFactor:", "replicas:")
    assert problems({"a.yaml": text}) == [
        "a.yaml:1:1: error: missing required field 'replicationFactor' (here, or in "
        "cluster.yaml's defaults: or a profile)",
        "a.yaml:5:1: error: unknown field 'replicas' (did you mean 'replicationFactor'?)",
    ]


def test_partitions_written_as_a_string_is_a_type_error(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC.replace("partitions: 3", "partitions: '3'")}) == [
        "a.yaml:4:13: error: partitions must be an integer, not the string '3'"
    ]


def test_a_name_yaml_reads_as_a_number_says_to_quote_it(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC.replace("name: orders", "name: 2024")}) == [
        "a.yaml:3:7: error: name must be a string, not the number 2024 (put it in quotes: "
        "unquoted, YAML reads it as a number)"
    ]


def test_a_rack_yaml_reads_as_a_boolean_says_to_quote_it(problems: Problems) -> None:
    cluster = CLUSTER.replace("rack: a}", "rack: yes}")
    assert problems({}, cluster=cluster) == [
        "cluster.yaml:6:27: error: simulated.brokers.0.rack must be a string, not true "
        "(put it in quotes: unquoted, YAML reads it as a boolean)"
    ]


def test_replication_factor_as_a_float_with_a_fraction_is_a_type_error(
    problems: Problems,
) -> None:
    text = TOPIC.replace("replicationFactor: 3", "replicationFactor: 2.5")
    assert problems({"a.yaml": text}) == [
        "a.yaml:5:20: error: replicationFactor must be an integer, not the number 2.5"
    ]


def test_delete_must_be_a_boolean(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "delete: maybe\n"}) == [
        "a.yaml:6:9: error: delete must be true or false, not the string 'maybe'"
    ]


def test_config_must_be_a_mapping(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "config: [retention.ms]\n"}) == [
        "a.yaml:6:9: error: config must be a mapping, not a list"
    ]


def test_an_unknown_placement_suggests_the_closest(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "placement: rackaware\n"}) == [
        "a.yaml:6:12: error: placement must be one of rack-aware, rack-unaware, static, "
        "not 'rackaware' (did you mean 'rack-aware'?)"
    ]


def test_keys_needs_a_sample(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "keys: {column: id}\n"}) == [
        "a.yaml:6:7: error: keys: missing required field 'sample'"
    ]


# ------------------------------------------------------------ topic names


def test_a_topic_name_with_illegal_characters_names_them(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC.replace("orders", "'ord ers!'")}) == [
        "a.yaml:3:7: error: topic name 'ord ers!' has characters Kafka does not allow "
        "(' ' '!'); use ASCII letters, digits, '.', '_' and '-'"
    ]


def test_a_topic_name_cannot_be_dot_dot(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC.replace("orders", "'..'")}) == [
        "a.yaml:3:7: error: topic name cannot be '..'"
    ]


def test_a_topic_name_cannot_be_longer_than_249(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC.replace("orders", "x" * 250)}) == [
        "a.yaml:3:7: error: topic name is 250 characters long; Kafka allows at most 249"
    ]


def test_a_topic_name_of_249_characters_is_fine(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC.replace("orders", "x" * 249)}) == []


@pytest.mark.parametrize("name", ["__consumer_offsets", "__remote_log_metadata"])
def test_kafkas_internal_topics_cannot_be_managed(problems: Problems, name: str) -> None:
    """``__remote_log_metadata`` too: tiered storage's metadata, which the brokers create
    (TopicBasedRemoteLogMetadataManager) though Metadata does not flag it internal."""
    assert problems({"a.yaml": TOPIC.replace("orders", name)}) == [
        f"a.yaml:3:7: error: {name} is one of Kafka's internal topics; the brokers "
        "create and manage it"
    ]


def test_a_name_starting_with_two_underscores_is_a_warning(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC.replace("orders", "__connect-offsets")}) == [
        "a.yaml:3:7: warning: topic names starting with '__' are for internal topics (Kafka's, "
        "Connect's, Streams'); is '__connect-offsets' meant to be managed here?"
    ]


def test_a_topic_defined_twice_is_an_error_at_the_second(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC, "b.yaml": TOPIC}) == [
        "b.yaml:3:7: error: topic 'orders' is defined twice (first at a.yaml:3:7)"
    ]


def test_names_equal_once_dot_and_underscore_are_alike_collide(problems: Problems) -> None:
    text = TOPIC.replace("orders", "a.b") + "---\n" + TOPIC.replace("orders", "a_b")
    assert problems({"a.yaml": text}) == [
        "a.yaml:9:7: error: topic 'a_b' collides with 'a.b' (a.yaml:3:7): Kafka treats '.' "
        "and '_' alike in metric names and refuses the second"
    ]


# ------------------------------------------------------------ partitions and replicas


def test_partitions_must_be_at_least_1(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC.replace("partitions: 3", "partitions: 0")}) == [
        "a.yaml:4:13: error: partitions must be at least 1, not 0"
    ]


def test_replication_factor_must_be_at_least_1(problems: Problems) -> None:
    text = TOPIC.replace("replicationFactor: 3", "replicationFactor: 0")
    assert problems({"a.yaml": text}) == [
        "a.yaml:5:20: error: replicationFactor must be at least 1, not 0"
    ]


def test_replication_factor_above_the_brokers_is_an_error(problems: Problems) -> None:
    text = TOPIC.replace("replicationFactor: 3", "replicationFactor: 4")
    assert problems({"a.yaml": text}) == [
        "a.yaml:5:20: error: replicationFactor 4 is larger than the number of brokers (3)"
    ]


def test_brokers_from_a_state_file_override_the_simulated_ones(problems: Problems) -> None:
    two = [Broker(0, "a"), Broker(1, "b")]
    assert problems({"a.yaml": TOPIC}, brokers=two) == [
        "a.yaml:5:20: error: replicationFactor 3 is larger than the number of brokers (2)"
    ]


def test_replication_factor_1_is_a_warning(problems: Problems) -> None:
    text = TOPIC.replace("replicationFactor: 3", "replicationFactor: 1")
    assert problems({"a.yaml": text}) == [
        "a.yaml:5:20: warning: replicationFactor 1: the topic has one copy; it is unavailable, "
        "and may be lost, when its broker fails"
    ]


def test_replication_factor_1_on_a_one_broker_cluster_is_fine(problems: Problems) -> None:
    text = TOPIC.replace("replicationFactor: 3", "replicationFactor: 1")
    assert problems({"a.yaml": text}, brokers=[Broker(0)]) == []


def test_min_insync_replicas_above_the_replication_factor_is_an_error_before_kafka_3_7(
    problems: Problems,
) -> None:
    cluster = CLUSTER.replace("name: test\n", 'name: test\nkafkaVersion: "3.6"\n')
    assert problems({"a.yaml": TOPIC + "config:\n  min.insync.replicas: 4\n"}, cluster) == [
        "a.yaml:7:24: error: min.insync.replicas 4 is above replicationFactor 3: producers "
        "with acks=all could never write (Kafka 3.6; 3.7 and later cap it at the replica count)"
    ]


def test_min_insync_replicas_above_the_replication_factor_is_a_warning_from_kafka_3_7(
    problems: Problems,
) -> None:
    # Partition.effectiveMinIsr (KAFKA-15583): min(min.insync.replicas, replicas)
    expected = [
        "a.yaml:7:24: warning: min.insync.replicas 4 is above replicationFactor 3: Kafka {v} "
        "counts it as 3 (every replica must be in sync), so one broker down stops producers "
        "with acks=all"
    ]
    text = TOPIC + "config:\n  min.insync.replicas: 4\n"
    assert problems({"a.yaml": text}) == [expected[0].format(v="4.1")]  # the default
    cluster = CLUSTER.replace("name: test\n", 'name: test\nkafkaVersion: "3.7.2"\n')
    assert problems({"a.yaml": text}, cluster) == [expected[0].format(v="3.7")]


def test_segment_bytes_below_1_mib_is_refused_from_kafka_4_0_only(problems: Problems) -> None:
    text = TOPIC + "config:\n  segment.bytes: 65536\n"
    assert problems({"a.yaml": text}) == [
        "a.yaml:7:18: error: segment.bytes must be at least 1048576, not 65536"
    ]
    cluster = CLUSTER.replace("name: test\n", 'name: test\nkafkaVersion: "3.9"\n')
    assert problems({"a.yaml": text}, cluster) == []
    assert problems({"a.yaml": TOPIC + "config:\n  segment.bytes: 10\n"}, cluster) == [
        "a.yaml:7:18: error: segment.bytes must be at least 14, not 10"
    ]


def test_a_kafka_version_that_is_not_one_is_refused(problems: Problems) -> None:
    cluster = CLUSTER.replace("name: test\n", "name: test\nkafkaVersion: latest\n")
    found = problems({"a.yaml": TOPIC}, cluster)
    assert len(found) == 1 and found[0].startswith("cluster.yaml:4:15: error: kafkaVersion")


def test_min_insync_replicas_equal_to_the_replication_factor_is_a_warning(
    problems: Problems,
) -> None:
    assert problems({"a.yaml": TOPIC + "config:\n  min.insync.replicas: '3'\n"}) == [
        "a.yaml:7:24: warning: min.insync.replicas 3 equals replicationFactor 3: one broker "
        "down stops producers with acks=all"
    ]


# ------------------------------------------------------------ placement


def test_a_static_assignment_is_checked_list_by_list(problems: Problems) -> None:
    text = TOPIC + (
        "placement: static\nassignment:\n  - [0, 1, 2]\n  - [0, 0, 1]\n  - [0, 1, 7]\n  - [1, 2]\n"
    )
    assert problems({"a.yaml": text}) == [
        "a.yaml:8:3: error: the assignment has 4 replica lists but partitions is 3; give one "
        "list per partition",
        "a.yaml:9:9: error: partition 1 lists broker 0 twice",
        "a.yaml:10:12: error: broker 7 (partition 2) is not a broker of the cluster "
        "(brokers: 0, 1, 2)",
        "a.yaml:11:5: error: partition 3 has 2 replicas but replicationFactor is 3",
    ]


def test_a_static_partition_on_fewer_racks_than_it_could_use_is_a_warning(
    problems: Problems,
) -> None:
    brokers = [Broker(0, "a"), Broker(1, "a"), Broker(2, "b"), Broker(3, "c")]
    text = TOPIC + "placement: static\nassignment: [[0, 2, 3], [0, 1, 2], [3, 2, 0]]\n"
    assert problems({"a.yaml": text}, brokers=brokers) == [
        "a.yaml:7:25: warning: partition 1 has its 3 replicas in 2 of the 3 racks it could use "
        "(a, b); losing one rack loses more than one replica"
    ]


def test_placement_static_needs_an_assignment(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "placement: static\n"}) == [
        "a.yaml:6:12: error: placement: static needs an assignment (one list per partition)"
    ]


def test_an_assignment_needs_placement_static(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "assignment: [[0, 1, 2], [1, 2, 0], [2, 0, 1]]\n"}) == [
        "a.yaml:6:13: error: an assignment is only used with placement: static"
    ]


def test_a_start_index_with_a_static_assignment_is_an_error(problems: Problems) -> None:
    text = (
        TOPIC + "placement: static\nstartIndex: 1\nassignment: [[0, 1, 2], [1, 2, 0], [2, 0, 1]]\n"
    )
    assert problems({"a.yaml": text}) == [
        "a.yaml:7:13: error: startIndex has no meaning with placement: static"
    ]


def test_the_start_index_must_be_below_the_broker_count(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "startIndex: 3\n"}) == [
        "a.yaml:6:13: error: startIndex 3 is out of range: placement uses 3 brokers, so it "
        "must be below 3"
    ]


def test_the_start_index_counts_only_brokers_not_decommissioned(problems: Problems) -> None:
    text = TOPIC.replace("replicationFactor: 3", "replicationFactor: 2") + "startIndex: 2\n"
    assert problems({"a.yaml": text}, cluster=CLUSTER + "decommission: [0]\n") == [
        "a.yaml:6:13: error: startIndex 2 is out of range: placement uses 2 brokers once "
        "broker 0 is decommissioned, so it must be below 2"
    ]


def test_a_static_assignment_may_not_keep_replicas_on_a_decommissioned_broker(
    problems: Problems,
) -> None:
    text = (
        TOPIC.replace("replicationFactor: 3", "replicationFactor: 2").replace(
            "partitions: 3", "partitions: 2"
        )
        + "placement: static\nassignment: [[1, 2], [2, 0]]\n"
    )
    assert problems({"a.yaml": text}, cluster=CLUSTER + "decommission: [0]\n") == [
        "a.yaml:7:26: error: broker 0 (partition 1) is decommissioned in cluster.yaml; move "
        "this replica in the static assignment to another broker"
    ]


def test_a_negative_start_index_is_an_error(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "startIndex: -1\n"}) == [
        "a.yaml:6:13: error: startIndex must be at least 0, not -1"
    ]


def test_rack_aware_placement_needs_a_rack_on_every_broker(problems: Problems) -> None:
    brokers = [Broker(0, "a"), Broker(1, None), Broker(2, None)]
    assert problems({"a.yaml": TOPIC + "placement: rack-aware\n"}, brokers=brokers) == [
        "a.yaml:6:12: error: placement rack-aware needs a rack on every broker; brokers 1, 2 "
        "have none"
    ]


def test_a_missing_key_sample_is_an_error(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "keys: {sample: samples/nope.csv}\n"}) == [
        "a.yaml:6:16: error: key sample not found: samples/nope.csv"
    ]


# ------------------------------------------------------------ topic configs


def test_an_unknown_config_suggests_the_closest_name(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "config:\n  retention.msx: 5\n"}) == [
        "a.yaml:7:3: error: unknown topic config 'retention.msx' (did you mean 'retention.ms'?)"
    ]


def test_an_unknown_config_with_nothing_close_has_no_suggestion(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "config:\n  colour: blue\n"}) == [
        "a.yaml:7:3: error: unknown topic config 'colour'"
    ]


def test_a_duration_config_must_be_milliseconds_or_a_duration_with_units(
    problems: Problems,
) -> None:
    assert problems({"a.yaml": TOPIC + "config:\n  retention.ms: 7 days\n"}) == [
        "a.yaml:7:17: error: retention.ms must be a duration (7d, 36h, 15m, 500ms) or a number "
        "of milliseconds, or infinite, not the string '7 days'"
    ]


def test_a_config_below_kafkas_minimum_is_an_error(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "config:\n  retention.ms: -2\n"}) == [
        "a.yaml:7:17: error: retention.ms must be at least -1, not -2"
    ]


def test_an_int_config_above_a_32_bit_int_is_an_error(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "config:\n  max.message.bytes: 3000000000\n"}) == [
        "a.yaml:7:22: error: max.message.bytes must be at most 2147483647 (Kafka holds it in "
        "a 32-bit int), not 3000000000"
    ]


def test_segment_bytes_below_one_mebibyte_is_an_error(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "config:\n  segment.bytes: 10\n"}) == [
        "a.yaml:7:18: error: segment.bytes must be at least 1048576, not 10"
    ]


def test_a_double_config_out_of_range_is_an_error(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "config:\n  min.cleanable.dirty.ratio: 1.5\n"}) == [
        "a.yaml:7:30: error: min.cleanable.dirty.ratio must be between 0 and 1, not 1.5"
    ]


def test_a_boolean_config_must_be_true_or_false(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "config:\n  preallocate: 'sometimes'\n"}) == [
        "a.yaml:7:16: error: preallocate must be true or false, not the string 'sometimes'"
    ]


def test_an_enum_config_in_the_wrong_case_suggests_the_right_one(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "config:\n  compression.type: ZSTD\n"}) == [
        "a.yaml:7:21: error: compression.type must be one of uncompressed, zstd, lz4, snappy, "
        "gzip, producer, not 'ZSTD' (did you mean 'zstd'?)"
    ]


def test_a_list_config_item_must_be_allowed(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC + "config:\n  cleanup.policy: compacted\n"}) == [
        "a.yaml:7:19: error: cleanup.policy: 'compacted' is not one of compact, delete "
        "(did you mean 'compact'?)"
    ]


def test_throttle_configs_belong_to_apply(problems: Problems) -> None:
    text = TOPIC + "config:\n  leader.replication.throttled.replicas: '*'\n"
    assert problems({"a.yaml": text}) == [
        "a.yaml:7:3: error: leader.replication.throttled.replicas is set by kgitops apply "
        "while replicas move; remove it from the spec"
    ]


def test_a_config_removed_in_kafka_4_is_a_warning(problems: Problems) -> None:
    text = TOPIC + "config:\n  message.downconversion.enable: false\n"
    assert problems({"a.yaml": text}) == [
        "a.yaml:7:3: warning: message.downconversion.enable is deprecated and was removed in "
        "Kafka 4.0"
    ]


def test_min_compaction_lag_above_max_is_an_error(problems: Problems) -> None:
    text = TOPIC + (
        "config:\n"
        "  cleanup.policy: compact\n"
        "  min.compaction.lag.ms: 10\n"
        "  max.compaction.lag.ms: 5\n"
    )
    assert problems({"a.yaml": text}) == [
        "a.yaml:8:26: error: min.compaction.lag.ms (10) is above max.compaction.lag.ms (5)"
    ]


def test_tiered_storage_keeps_less_locally_than_in_total(problems: Problems) -> None:
    text = TOPIC + (
        "config:\n  remote.storage.enable: true\n  retention.ms: 1000\n  local.retention.ms: 2000\n"
    )
    assert problems({"a.yaml": text}) == [
        "a.yaml:9:23: error: local.retention.ms (2000) is above retention.ms (1000)"
    ]


def test_tiered_storage_needs_cleanup_policy_delete(problems: Problems) -> None:
    text = TOPIC + "config:\n  remote.storage.enable: true\n  cleanup.policy: compact\n"
    assert problems({"a.yaml": text}) == [
        "a.yaml:8:19: error: tiered storage (remote.storage.enable) needs cleanup.policy delete"
    ]


def test_a_compression_level_for_another_codec_is_a_warning(problems: Problems) -> None:
    text = TOPIC + "config:\n  compression.type: lz4\n  compression.zstd.level: 9\n"
    assert problems({"a.yaml": text}) == [
        "a.yaml:8:27: warning: compression.zstd.level has no effect unless compression.type is zstd"
    ]


def test_retention_on_a_compact_only_topic_is_a_warning(problems: Problems) -> None:
    text = TOPIC + "config:\n  cleanup.policy: compact\n  retention.ms: 1000\n"
    assert problems({"a.yaml": text}) == [
        "a.yaml:8:17: warning: retention.ms has no effect with cleanup.policy compact: "
        "nothing expires (use compact,delete to also expire old data)"
    ]


def test_compaction_settings_without_compaction_are_a_warning(problems: Problems) -> None:
    text = TOPIC + "config:\n  min.compaction.lag.ms: 1000\n"
    assert problems({"a.yaml": text}) == [
        "a.yaml:7:26: warning: min.compaction.lag.ms has no effect without compaction "
        "(cleanup.policy has no compact)"
    ]


def test_retention_bytes_below_one_segment_is_a_warning(problems: Problems) -> None:
    text = TOPIC + "config:\n  retention.bytes: 1048576\n  segment.bytes: 104857600\n"
    assert problems({"a.yaml": text}) == [
        "a.yaml:7:20: warning: retention.bytes (1048576) is below segment.bytes (104857600): "
        "Kafka deletes whole closed segments, so a partition keeps up to segment.bytes more"
    ]


def test_every_config_error_of_a_topic_is_reported_at_once(problems: Problems) -> None:
    text = TOPIC + ("config:\n  retention.ms: forever\n  segment.ms: 0\n  colour: blue\n")
    assert problems({"a.yaml": text}) == [
        "a.yaml:7:17: error: retention.ms must be a duration (7d, 36h, 15m, 500ms) or a number "
        "of milliseconds, or infinite, not the string 'forever'",
        "a.yaml:8:15: error: segment.ms must be at least 1, not 0",
        "a.yaml:9:3: error: unknown topic config 'colour'",
    ]


def test_config_errors_show_even_when_the_rest_of_the_topic_is_invalid(
    problems: Problems,
) -> None:
    text = TOPIC.replace("partitions: 3", "partitions: 0") + "config:\n  retention.msx: 5\n"
    assert problems({"a.yaml": text}) == [
        "a.yaml:4:13: error: partitions must be at least 1, not 0",
        "a.yaml:7:3: error: unknown topic config 'retention.msx' (did you mean 'retention.ms'?)",
    ]


# ------------------------------------------------------------ the cluster file


def test_a_folder_without_a_cluster_document_is_an_error(problems: Problems) -> None:
    found = problems({"a.yaml": TOPIC}, cluster=None)
    assert len(found) == 1
    assert found[0].endswith(
        ":1:1: error: no Cluster document in this folder (expected cluster.yaml with kind: Cluster)"
    )


def test_a_second_cluster_document_is_an_error(problems: Problems) -> None:
    assert problems({"more.yaml": CLUSTER}) == [
        "more.yaml:2:7: error: a second Cluster document (the first is at cluster.yaml:2:7); "
        "a folder describes one cluster"
    ]


def test_a_cluster_needs_bootstrap_servers_or_simulated(problems: Problems) -> None:
    cluster = "apiVersion: kgitops/v1\nkind: Cluster\nname: prod\n"
    assert problems({}, cluster=cluster) == [
        "cluster.yaml:1:1: error: a Cluster needs bootstrapServers (a real cluster) or "
        "simulated (a simulated one)"
    ]


def test_a_bootstrap_server_must_be_host_and_port(problems: Problems) -> None:
    cluster = "apiVersion: kgitops/v1\nkind: Cluster\nname: p\nbootstrapServers: [kafka-1]\n"
    assert problems({}, cluster=cluster) == [
        "cluster.yaml:4:20: error: bootstrap server 'kafka-1' is not host:port"
    ]


def test_a_bootstrap_port_must_be_a_tcp_port(problems: Problems) -> None:
    cluster = (
        "apiVersion: kgitops/v1\nkind: Cluster\nname: p\n"
        "bootstrapServers: ['kafka-1:9092', 'kafka-2:99999']\n"
    )
    assert problems({}, cluster=cluster) == [
        "cluster.yaml:4:36: error: bootstrap server 'kafka-2:99999': port must be 1..65535"
    ]


def test_a_password_in_the_file_is_refused_with_the_env_hint(problems: Problems) -> None:
    cluster = (
        "apiVersion: kgitops/v1\nkind: Cluster\nname: p\nbootstrapServers: ['k:9093']\n"
        "security:\n"
        "  protocol: SASL_SSL\n"
        "  sasl:\n"
        "    mechanism: SCRAM-SHA-512\n"
        "    usernameEnv: KAFKA_USERNAME\n"
        "    password: hunter2\n"
    )
    assert problems({}, cluster=cluster) == [
        "cluster.yaml:8:5: error: security.sasl: missing required field 'passwordEnv'",
        "cluster.yaml:10:5: error: unknown field 'password' in security.sasl: secrets never "
        "go in a file; name the environment variable that holds it with passwordEnv",
    ]


def test_an_env_field_must_hold_a_variable_name_not_a_secret(problems: Problems) -> None:
    cluster = (
        "apiVersion: kgitops/v1\nkind: Cluster\nname: p\nbootstrapServers: ['k:9093']\n"
        "security:\n"
        "  protocol: SASL_SSL\n"
        "  sasl: {mechanism: PLAIN, usernameEnv: KAFKA_USERNAME, passwordEnv: 's3cr3t!'}\n"
    )
    assert problems({}, cluster=cluster) == [
        "cluster.yaml:7:70: error: security.sasl.passwordEnv must name an environment variable "
        "(letters, digits and _), not hold the secret itself"
    ]


def test_a_sasl_protocol_needs_sasl_settings(problems: Problems) -> None:
    cluster = (
        "apiVersion: kgitops/v1\nkind: Cluster\nname: p\nbootstrapServers: ['k:9093']\n"
        "security: {protocol: SASL_SSL}\n"
    )
    assert problems({}, cluster=cluster) == [
        "cluster.yaml:5:22: error: protocol SASL_SSL needs security.sasl (mechanism, "
        "usernameEnv, passwordEnv)"
    ]


def test_ssl_settings_need_an_ssl_protocol(problems: Problems) -> None:
    cluster = (
        "apiVersion: kgitops/v1\nkind: Cluster\nname: p\nbootstrapServers: ['k:9093']\n"
        "security:\n  protocol: PLAINTEXT\n  ssl: {caFile: ca.pem}\n"
    )
    assert problems({}, cluster=cluster) == [
        "cluster.yaml:7:3: error: security.ssl needs protocol SSL or SASL_SSL, not PLAINTEXT"
    ]


def test_a_decommissioned_broker_must_exist(problems: Problems) -> None:
    assert problems({}, cluster=CLUSTER + "decommission: [2, 9]\n") == [
        "cluster.yaml:7:19: error: broker 9 in decommission is not a broker of the cluster "
        "(brokers: 0, 1, 2)"
    ]


def test_decommissioning_below_the_replication_factor_is_an_error(problems: Problems) -> None:
    assert problems({"a.yaml": TOPIC}, cluster=CLUSTER + "decommission: [2]\n") == [
        "a.yaml:5:20: error: replicationFactor 3 needs 3 brokers, but only 2 remain once "
        "broker 2 is decommissioned"
    ]


def test_a_simulated_broker_id_given_twice_is_an_error(problems: Problems) -> None:
    cluster = CLUSTER.replace("{id: 2, rack: c}", "{id: 1, rack: c}")
    assert problems({}, cluster=cluster) == [
        "cluster.yaml:6:54: error: broker id 1 is listed twice (first at simulated.brokers.1)"
    ]


def test_both_bootstrap_servers_and_simulated_is_an_error(problems: Problems) -> None:
    cluster = CLUSTER + "bootstrapServers: ['k:9092']\n"
    assert problems({}, cluster=cluster) == [
        "cluster.yaml:4:1: error: bootstrapServers and simulated exclude each other: a cluster "
        "is real or simulated"
    ]


def test_a_cluster_name_uses_the_same_characters_as_a_topic(problems: Problems) -> None:
    assert problems({}, cluster=CLUSTER.replace("name: test", "name: my cluster")) == [
        "cluster.yaml:3:7: error: cluster name 'my cluster' may only use letters, digits, '.', "
        "'_' and '-'"
    ]


def test_an_unknown_unmanaged_topics_policy_is_an_error(problems: Problems) -> None:
    assert problems({}, cluster=CLUSTER + "unmanagedTopics: delete\n") == [
        "cluster.yaml:7:18: error: unmanagedTopics must be one of ignore, warn, error, not 'delete'"
    ]


# ------------------------------------------------------------ the whole folder


def test_every_problem_of_every_file_is_reported_sorted(problems: Problems) -> None:
    found = problems(
        {
            "b.yaml": TOPIC.replace("partitions: 3", "partitions: 0"),
            "a.yaml": TOPIC.replace("orders", "payments").replace(
                "replicationFactor: 3", "replicationFactor: 9"
            ),
            "team/c.yml": "",
        }
    )
    assert found == [
        "a.yaml:5:20: error: replicationFactor 9 is larger than the number of brokers (3)",
        "b.yaml:4:13: error: partitions must be at least 1, not 0",
        "team/c.yml:1:1: error: an empty file: no YAML document in it",
    ]


def test_a_folder_that_cannot_be_listed_is_an_error(tmp_path: Path) -> None:
    from kgitops.errors import Diagnostic
    from kgitops.spec.folders import spec_files

    not_a_folder = tmp_path / "team"
    not_a_folder.write_text("")
    found: list[Diagnostic] = []
    assert spec_files(str(not_a_folder), found) == []
    assert [str(d) for d in found] == [
        f"{not_a_folder}:1:1: error: cannot read the folder: Not a directory"
    ]


def test_a_dangling_symlink_is_an_unreadable_file(problems: Problems, tmp_path: Path) -> None:
    (tmp_path / "gone.yaml").symlink_to(tmp_path / "nowhere.yaml")
    assert problems({}) == ["gone.yaml:1:1: error: cannot read the file: No such file or directory"]


def test_hidden_folders_and_other_files_are_skipped(problems: Problems) -> None:
    assert (
        problems(
            {
                "a.yaml": TOPIC,
                ".state/junk.yaml": "not: [valid",
                "notes.txt": "\x00",
                "kgitops.lock": "{",
            }
        )
        == []
    )


def test_the_access_probe_deadline_is_read_from_cluster_yaml_and_must_be_positive(
    problems: Problems, tmp_path: Path
) -> None:
    from kgitops.spec.load import load_specs

    assert problems({}, cluster=CLUSTER + "accessProbeTimeoutMs: 10000\n") == []
    cluster = load_specs(str(tmp_path)).cluster
    assert cluster is not None and cluster.access_probe_timeout_ms == 10_000
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    cluster = load_specs(str(tmp_path)).cluster
    assert cluster is not None and cluster.access_probe_timeout_ms == 3_000
    [line] = problems({}, cluster=CLUSTER + "accessProbeTimeoutMs: 0\n")
    assert line.startswith("cluster.yaml:7:23: error: ")
    [line] = problems({}, cluster=CLUSTER + "accessProbeTimeoutMs: 3s\n")
    assert line.startswith("cluster.yaml:7:23: error: ")
