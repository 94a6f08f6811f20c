"""The globs of cluster.yaml ``owns:``: matching, prefix cover, overlap, checked against
brute force over a small alphabet."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from kgitops.access import Acl
from kgitops.model import Owns, glob_covers_prefix, glob_match, globs_overlap

ALPHABET = "ab."
NAMES = ["".join(p) for n in range(6) for p in itertools.product(ALPHABET, repeat=n)]
globs = st.text(alphabet="ab.*?", max_size=4)


def test_star_matches_dots_and_question_mark_one_character() -> None:
    assert glob_match("payments.*", "payments.orders.v1")
    assert not glob_match("payments.*", "payments")
    assert glob_match("a?c", "abc") and not glob_match("a?c", "ac")
    assert glob_match("a+b", "a+b") and not glob_match("a+b", "aab")  # no regex leaks


@given(globs, globs)
def test_overlap_is_exactly_a_shared_name(a: str, b: str) -> None:
    shared = any(glob_match(a, n) and glob_match(b, n) for n in NAMES)
    if shared:
        assert globs_overlap(a, b)
    if not globs_overlap(a, b):
        assert not shared
    assert globs_overlap(a, b) == globs_overlap(b, a)


@given(globs, st.text(alphabet=ALPHABET, max_size=3))
def test_a_prefix_is_covered_only_when_every_name_with_it_matches(
    pattern: str, prefix: str
) -> None:
    if glob_covers_prefix(pattern, prefix):
        for tail in NAMES:
            assert glob_match(pattern, prefix + tail)


def test_an_acl_is_the_folders_when_it_owns_principal_and_resource() -> None:
    owns = Owns(topics=("pay.*",), principals=("User:pay-*",), groups=(), declared=True)
    mine = Acl("User:pay-app", "topic", "pay.orders", "literal", "read")
    assert owns.acl(mine)
    assert not owns.acl(Acl("User:ship-app", "topic", "pay.orders", "literal", "read"))
    assert not owns.acl(Acl("User:pay-app", "topic", "ship.x", "literal", "read"))
    assert not owns.acl(Acl("User:pay-app", "topic", "*", "literal", "read"))  # every topic
    assert not owns.acl(Acl("User:pay-app", "topic", "pa", "prefixed", "read"))
    assert owns.acl(Acl("User:pay-app", "topic", "pay.", "prefixed", "read"))
    assert not owns.acl(Acl("User:pay-app", "group", "pay-g", "literal", "read"))  # no groups
    # cluster-wide rights are the business of the folder that owns everything (no owns:)
    assert not owns.acl(Acl("User:pay-app", "cluster", "kafka-cluster", "literal", "all"))
    assert Owns().acl(Acl("User:pay-app", "cluster", "kafka-cluster", "literal", "all"))
    assert Owns().acl(Acl("User:x", "topic", "*", "literal", "read"))  # no owns: everything
