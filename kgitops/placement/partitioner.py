"""Kafka's default key partitioner: ``toPositive(murmur2(keyBytes)) % numPartitions``.

This is what the Java producer (``BuiltInPartitioner.partitionForKey``, and the older
``DefaultPartitioner``) does for every record that has a key and no explicit partition, so a
key's partition is a pure function of its bytes and the partition count; that is why adding
partitions to a keyed topic remaps keys (the planner warns with ``KEY_REMAP``).

Records without a key are not hashed. Since Kafka 2.4 (KIP-480) the producer fills a batch
for one partition before switching ("sticky"), and since 3.3 (KIP-794) it picks the next
partition uniformly, weighted away from slow brokers ("uniform sticky"). Over time that
spreads null-key records evenly, which is how kgitops models them.

>>> murmur2(b"21")
-973932308
>>> partition_for("foobar", 12)
6
"""

from __future__ import annotations

_M = 0x5BD1E995
_MASK = 0xFFFFFFFF
_SEED = 0x9747B28C


def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2`` (MurmurHash2, seed 0x9747b28c), as a signed 32-bit int."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    whole = length & ~3
    for i in range(0, whole, 4):
        k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    rest = length & 3
    if rest == 3:
        h ^= data[whole + 2] << 16
    if rest >= 2:
        h ^= data[whole + 1] << 8
    if rest >= 1:
        h ^= data[whole]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def to_positive(x: int) -> int:
    """Kafka's ``Utils.toPositive``: ``x & 0x7fffffff`` (not the absolute value)."""
    return x & 0x7FFFFFFF


def key_bytes(key: str | bytes) -> bytes:
    """A key as the producer's serializer gives it: strings as UTF-8 (StringSerializer)."""
    return key.encode("utf-8") if isinstance(key, str) else bytes(key)


def partition_for(key: str | bytes, n_partitions: int) -> int:
    """The partition Kafka's producer sends a record with this key to."""
    if n_partitions <= 0:
        raise ValueError(f"the number of partitions must be at least 1, not {n_partitions}")
    return to_positive(murmur2(key_bytes(key))) % n_partitions
