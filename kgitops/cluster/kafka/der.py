"""The few DER (ASN.1) reads kgitops makes on key files, with no crypto library: the elements
of an encoding, and an OBJECT IDENTIFIER as dotted text. Used to take a key out of keytool's
PKCS12 (``localtls``) and to name the scheme an encrypted PKCS#8 key uses (``javaconfig``)."""

from __future__ import annotations


def elements(data: bytes) -> list[tuple[int, bytes]]:
    """The (tag, content) of each DER element in ``data``, in order; ``data`` is exactly
    those elements (definite lengths: DER has no other). ``ValueError`` on anything else."""
    out: list[tuple[int, bytes]] = []
    i = 0
    while i < len(data):
        if i + 2 > len(data):
            raise ValueError("a DER element cut short")
        tag, length = data[i], data[i + 1]
        if tag & 0x1F == 0x1F:
            raise ValueError("a DER tag of more than one byte")
        i += 2
        if length & 0x80:
            size = length & 0x7F
            if not 1 <= size <= 4 or i + size > len(data):
                raise ValueError("a DER length that is not definite")
            length = int.from_bytes(data[i : i + size], "big")
            i += size
        if i + length > len(data):
            raise ValueError("a DER element longer than its container")
        out.append((tag, data[i : i + length]))
        i += length
    return out


MAX_OID = 64
"""The longest OBJECT IDENTIFIER content read, in bytes: the ones kgitops compares take 9 to
11, and a longer one from a hostile file would cost quadratic time to decode."""


def oid(body: bytes) -> str:
    """An OBJECT IDENTIFIER's content as dotted text (``2a864886f70d01050d``:
    ``1.2.840.113549.1.5.13``). ``ValueError`` when empty, over ``MAX_OID`` bytes, or cut
    short (its last byte says more follow)."""
    if not body:
        raise ValueError("an empty object identifier")
    if len(body) > MAX_OID:
        raise ValueError(f"an object identifier of over {MAX_OID} bytes")
    if body[-1] & 0x80:
        raise ValueError("an object identifier cut short")
    arcs: list[int] = []
    value = 0
    for byte in body:
        value = value << 7 | (byte & 0x7F)
        if not byte & 0x80:
            if not arcs:
                arcs += [min(value // 40, 2), value - 40 * min(value // 40, 2)]
            else:
                arcs.append(value)
            value = 0
    return ".".join(map(str, arcs))
