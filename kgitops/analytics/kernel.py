"""Kafka's murmur2 over a whole Arrow batch at once, with numpy: the fallback when no JDK
compiler is there to build the Java UDF. Never a row-at-a-time Python loop.

The batch is an Arrow binary array: one data buffer and an offsets buffer. Keys are sorted
by their number of 4-byte blocks, longest first, so at block ``j`` the keys still being mixed
are a prefix of that order and every step is one vectorised gather over that prefix::

    keys (blocks)   b"user-1"(1)  b""(0)  b"customer-42"(2)
    order           customer-42, user-1, ""
    block 0         mix the first 2 of the order
    block 1         mix the first 1
    tail, final     every key at once (masks for lengths % 4 = 3, 2, 1)

uint32 arithmetic wraps as Java's int does, so the result, viewed as int32, is exactly
``Utils.murmur2``. Pure numpy and pyarrow, importable without Spark.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

SEED = np.uint32(0x9747B28C)
M = np.uint32(0x5BD1E995)
R = np.uint32(24)

U32 = npt.NDArray[np.uint32]


def murmur2_offsets(data: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]) -> U32:
    """murmur2 of every key ``data[offsets[i]:offsets[i+1]]``, as uint32 (view as int32 for
    Kafka's signed value). ``offsets`` has one more entry than there are keys."""
    starts = offsets[:-1].astype(np.int64, copy=False)
    lengths = (offsets[1:] - offsets[:-1]).astype(np.int64, copy=False)
    n = lengths.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.uint32)
    # Padding lets the tail read 3 bytes past any key without a bounds check.
    buf = np.concatenate([np.asarray(data, dtype=np.uint8), np.zeros(4, dtype=np.uint8)])
    blocks = lengths // 4
    top = int(blocks.max())
    if top < 1 << 16:  # numpy radix-sorts 16-bit keys: O(n), no comparisons
        order = np.argsort((top - blocks).astype(np.uint16), kind="stable")
    else:
        order = np.argsort(-blocks, kind="stable")
    sorted_blocks = blocks[order]
    pos = starts[order]
    h = SEED ^ lengths[order].astype(np.uint32)
    max_blocks = int(sorted_blocks[0])
    with np.errstate(over="ignore"):
        # active[j] = how many keys have more than j blocks (a prefix of the order)
        active = n - np.searchsorted(sorted_blocks[::-1], np.arange(max_blocks), side="right")
        for j in range(max_blocks):
            a = int(active[j])
            p = pos[:a] + 4 * j
            k = (
                buf[p].astype(np.uint32)
                | (buf[p + 1].astype(np.uint32) << np.uint32(8))
                | (buf[p + 2].astype(np.uint32) << np.uint32(16))
                | (buf[p + 3].astype(np.uint32) << np.uint32(24))
            )
            k *= M
            k ^= k >> R
            k *= M
            hj = h[:a]
            hj *= M
            hj ^= k
        tail_len = (lengths[order] % 4).astype(np.int64)
        base = pos + 4 * sorted_blocks
        m3 = tail_len == 3
        h[m3] ^= buf[base[m3] + 2].astype(np.uint32) << np.uint32(16)
        m2 = tail_len >= 2
        h[m2] ^= buf[base[m2] + 1].astype(np.uint32) << np.uint32(8)
        m1 = tail_len >= 1
        h[m1] ^= buf[base[m1]].astype(np.uint32)
        h[m1] *= M
        h ^= h >> np.uint32(13)
        h *= M
        h ^= h >> np.uint32(15)
    out = np.empty(n, dtype=np.uint32)
    out[order] = h
    return out


def murmur2_arrow(array: Any) -> npt.NDArray[np.int32]:
    """Kafka's signed murmur2 of every value of an Arrow ``binary`` / ``large_binary`` /
    ``string`` array (strings as their UTF-8 bytes). Null entries hash as the empty key;
    the pipeline removes null keys before hashing."""
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_string(array.type):
        array = array.cast(pa.binary())
    elif pa.types.is_large_string(array.type):
        array = array.cast(pa.large_binary())
    if array.null_count:
        array = array.fill_null(b"")
    if pa.types.is_binary(array.type):
        offset_type: Any = np.int32
    elif pa.types.is_large_binary(array.type):
        offset_type = np.int64
    else:
        raise TypeError(f"murmur2 needs binary or string values, not {array.type}")
    n = len(array)
    bufs = array.buffers()
    offsets = np.frombuffer(bufs[1], dtype=offset_type, count=n + 1 + array.offset)
    offsets = offsets[array.offset :].astype(np.int64)
    data = (
        np.frombuffer(bufs[2], dtype=np.uint8)
        if bufs[2] is not None
        else np.zeros(0, dtype=np.uint8)
    )
    return murmur2_offsets(data, offsets).view(np.int32)
