"""The local clusters' defaults (``kgitops local``): where they live, their ports, the Kafka
release. Kept apart from the launchers (``cluster.local``, ``cluster.kafka.localcluster``) so
that the command line can show them in its help without importing the launchers, which
every other command would then pay for at start-up."""

from __future__ import annotations

import os

#: the embedded Tansu broker
TANSU_DIR = os.path.join(".kgitops", "local")
TANSU_PORT = 19092

#: a real Apache Kafka cluster (``--kafka``)
KAFKA_DIR = os.path.join(".kgitops", "kafka")
KAFKA_BASE_PORT = 19100
KAFKA_BROKERS = 4
KAFKA_VERSION = "4.1.2"
