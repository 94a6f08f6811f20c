"""What runs on this machine for the local Kafka cluster (``kgitops.cluster.kafka.localcluster``):
whether a pid is alive, a port open or taken, a free range of ports, which brokers answer
DescribeCluster unfenced (ready)."""

from __future__ import annotations

import contextlib
import os
import secrets
import socket

from kgitops.cluster.local import process_state
from kgitops.errors import LocalBrokerError

HOST = "127.0.0.1"
SASL_OFFSET = 50
SSL_OFFSET = 100
MTLS_OFFSET = 150
LOWEST_BASE, EPHEMERAL_START = 20000, 32768  # free_base_port's range
"""Broker ``i`` listens on ``base + i`` (PLAINTEXT), ``base + SASL_OFFSET + i`` (SASL) and
``base + SSL_OFFSET + i`` (TLS) and ``base + MTLS_OFFSET + i`` (TLS with a client certificate)."""


def describe_cluster_ids(bootstrap: str, timeout_ms: int = 3000) -> set[int]:
    """Broker ids in a DescribeCluster answer through ``bootstrap`` (PLAINTEXT); empty on any
    failure (a starting cluster refuses connections)."""
    from kafka.admin import KafkaAdminClient

    try:
        admin = KafkaAdminClient(
            bootstrap_servers=bootstrap.split(","),
            client_id="kgitops-local",
            request_timeout_ms=timeout_ms,
            reconnect_backoff_max_ms=500,
            bootstrap_timeout_ms=timeout_ms,
        )
    except Exception:  # NoBrokersAvailable and friends: not up yet
        return set()
    try:
        answer = admin.describe_cluster()
        return {int(b["broker_id"]) for b in answer.get("brokers", []) if not b.get("is_fenced")}
    except Exception:
        return set()
    finally:
        with contextlib.suppress(Exception):
            admin.close()


def alive(pid: int) -> bool:
    state = process_state(pid)
    if state == "zombie":
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
    return state == "running"


def port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex((HOST, port)) == 0


def port_taken(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        # as Kafka binds: a port left in TIME_WAIT by a stopped cluster is free to it
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((HOST, port))
        except OSError:
            return True
    return False


def free_base_port(brokers: int, attempts: int = 50) -> int:
    """A base port whose controller, PLAINTEXT, SASL and TLS ports are all free (tests), all
    of them below Linux's ephemeral range (32768 and up by default): a port there, free while
    its broker is stopped, can be taken by any outgoing connection, and the broker's restart
    then fails to bind it."""
    top = EPHEMERAL_START - MTLS_OFFSET - brokers  # the highest base whose ports stay below
    for _ in range(attempts):
        base = LOWEST_BASE + secrets.randbelow(top - LOWEST_BASE)
        ports = [base, *(base + i for i in range(1, brokers + 1))]
        ports += [
            base + off + i
            for off in (SASL_OFFSET, SSL_OFFSET, MTLS_OFFSET)
            for i in range(1, brokers + 1)
        ]
        if not any(port_taken(p) for p in ports):
            return base
    raise LocalBrokerError("no free range of ports found on 127.0.0.1")
