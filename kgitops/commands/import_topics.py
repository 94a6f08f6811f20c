"""`kgitops import DIR`: adopt live topics that git does not know yet.

For every live topic without a Topic document in DIR (internal ``__*`` topics aside:
``--include-internal`` takes those of Connect or Streams, never Kafka's own, which a spec may
not name), write ``DIR/<topic>.yaml`` (``plan.adopt.file_name``: never a hidden file) with its
partitions, replication factor and the configs set on it, and add its entry to kgitops.lock
with its placement recovered where Kafka's own algorithm explains it (see
``kgitops.plan.adopt``); the lock is written first, so an import killed between files is
completed by running it again. Before writing, the result is planned against the same
live state: a topic the planner would still move is written more literally until it would
not, so adopting a cluster moves nothing. Existing files are never overwritten.

Access too (``--no-access`` skips it): live ACL bindings, SCRAM credentials and client quotas
that no document names are written to ``DIR/access.yaml`` (``kgitops.plan.access_adopt``),
so the next plan has no access change. When the cluster's id is known and cluster.yaml does
not pin one, ``clusterId:`` is added to cluster.yaml; a pinned id that differs refuses.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from kgitops.commands._clusterdir import add_cluster_dir_argument
from kgitops.commands._options import add_dry_run, add_state, add_topic_filter
from kgitops.errors import printable
from kgitops.names import KAFKA_INTERNAL_TOPICS, is_internal_topic

if TYPE_CHECKING:
    from kgitops.model import ClusterSpec, ClusterState
    from kgitops.plan.adopt import Adoption
    from kgitops.plan.value import Plan
    from kgitops.spec.load import Specs
    from kgitops.spec.lock import Lock, LockEntry

NAME = "import"
HELP = "write topic files and lock entries for live topics not yet in git (moves nothing)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_cluster_dir_argument(parser)
    add_topic_filter(parser)
    add_state(parser, "import from it instead of the live cluster")
    parser.add_argument(
        "--include-internal",
        action="store_true",
        help="also import other internal __* topics (Connect's, Streams'); Kafka's own "
        "(__consumer_offsets...) never",
    )
    add_dry_run(parser, "the files", "writing them")
    parser.add_argument(
        "--no-access",
        action="store_true",
        help="do not import ACLs, SCRAM users and client quotas",
    )


def run(args: argparse.Namespace) -> int:
    from kgitops.errors import KgitopsError, SpecError
    from kgitops.files import write_atomic
    from kgitops.plan.adopt import adopt_topics, file_name, settle, topic_yaml
    from kgitops.spec.load import load_specs
    from kgitops.spec.lock import Lock, read_lock, write_lock

    specs = load_specs(args.dir)
    if specs.errors:
        raise SpecError(specs.diagnostics)
    assert specs.cluster is not None  # a missing cluster.yaml is an error above
    from kgitops.plan.identity import check_cluster_id

    state = _state(args, specs.cluster)
    check_cluster_id(specs.cluster, state, doing="import")
    access = _access_file(args, specs, state)
    known = {t.name for t in specs.topics}
    wanted = set(args.topic) if args.topic else None
    if wanted is not None and wanted - set(state.topics):
        missing = ", ".join(sorted(wanted - set(state.topics)))
        raise KgitopsError(f"no such topic on cluster {specs.cluster.name}: {missing}")
    own = sorted((wanted or set()) & specs.cluster.own_topics)
    if own:
        raise KgitopsError(
            f"{own[0]} is {specs.cluster.own_topic_role(own[0])}; it is never imported"
        )
    foreign = sorted(n for n in wanted or () if not specs.cluster.owns.topic(n))
    if foreign:
        raise KgitopsError(
            f"{', '.join(foreign)}: not this folder's (owns.topics in "
            f"{specs.cluster.mark_of('owns')}); another folder owns it, so it is never imported "
            "here"
        )
    kafkas = sorted((wanted or set()) & KAFKA_INTERNAL_TOPICS)
    if kafkas:
        raise KgitopsError(
            f"{', '.join(kafkas)}: Kafka's internal topic(s); the brokers create and manage "
            "them, so kgitops never imports them (a drain still moves their replicas)"
        )
    names = [
        n
        for n in sorted(state.topics)
        if n not in known
        and (wanted is None or n in wanted)
        and (args.include_internal or not is_internal_topic(n))
        and n not in specs.cluster.own_topics
        and n not in KAFKA_INTERNAL_TOPICS
        and specs.cluster.owns.topic(n)  # another folder's topic is not this one's to adopt
    ]
    lock = read_lock(args.dir)
    unlocked = _unlocked(specs, state, lock, wanted)
    if not names:
        print(f"nothing to import: every topic of cluster {specs.cluster.name} is in {args.dir}")
        if unlocked and not args.dry_run:
            entries = {**(lock.entries if lock is not None else {}), **unlocked}
            write_lock(args.dir, Lock(entries=dict(sorted(entries.items()))))
        _report_unlocked(unlocked, args)
        _finish(args, specs.cluster, state, access)
        return 0
    from kgitops.model import TOPIC_NAME_RULE, legal_topic_name

    illegal = [n for n in names if not legal_topic_name(n)]
    if illegal:  # a name is a file name here: never let one lead out of the folder
        raise KgitopsError(
            f"{len(illegal)} live topic name(s) break Kafka's rule ({TOPIC_NAME_RULE}); "
            "nothing was written"
        )
    existing = [n for n in names if os.path.lexists(os.path.join(args.dir, file_name(n)))]
    if existing:
        raise KgitopsError(
            "these files exist but hold no valid Topic document of the same name; move them "
            "or name the topic in them: "
            + ", ".join(os.path.join(args.dir, file_name(n)) for n in existing)
        )
    adoptions, plan = settle(adopt_topics(state, names), specs.topics, specs.cluster, state, lock)
    entries = dict(lock.entries) if lock is not None else {}
    entries.update(unlocked)
    entries.update({n: a.entry for n, a in adoptions.items()})
    if not args.dry_run:  # the lock first: a kill between files leaves entries a re-run redoes
        write_lock(args.dir, Lock(entries=dict(sorted(entries.items()))))
    for n, a in adoptions.items():
        text = topic_yaml(a, specs.cluster.name)
        path = os.path.join(args.dir, file_name(n))
        if args.dry_run:
            sys.stdout.write(f"--- {printable(path)}\n{text}")
        else:
            try:
                write_atomic(path, text, root=args.dir)
            except OSError as exc:
                raise KgitopsError(f"{path}: cannot write: {exc.strerror or exc}") from None
    _report(adoptions, plan, args)
    _report_unlocked(unlocked, args)
    _finish(args, specs.cluster, state, access)
    return 0


def _unlocked(
    specs: Specs, state: ClusterState, lock: Lock | None, wanted: set[str] | None
) -> dict[str, LockEntry]:
    """Lock entries for live topics whose file is in DIR, as ``import`` writes it, but which
    the lock lacks (an import stopped after its files): what the import would have added."""
    from kgitops.plan.adopt import written_entry

    out: dict[str, LockEntry] = {}
    for spec in specs.topics:
        name = spec.name
        if (
            spec.delete
            or name not in state.topics
            or (lock is not None and name in lock.entries)
            or (wanted is not None and name not in wanted)
        ):
            continue
        entry = written_entry(spec, state.topics[name], state.brokers)
        if entry is not None:
            out[name] = entry
    return out


def _report_unlocked(unlocked: dict[str, LockEntry], args: argparse.Namespace) -> None:
    if unlocked:
        verb = "would add" if args.dry_run else "added"
        print(
            f"{verb} the lock entries of {len(unlocked)} topic(s) whose files were already in "
            f"{args.dir}: {', '.join(sorted(unlocked))}",
            file=sys.stdout if not args.dry_run else sys.stderr,
        )


ACCESS_FILE = "access.yaml"


def _finish(
    args: argparse.Namespace,
    cluster: ClusterSpec,
    state: ClusterState,
    access: tuple[str, str, str],
) -> None:
    """After the topics: write access.yaml, pin the cluster id, say what was done."""
    path, text, note = access
    if text and not args.dry_run:
        with open(path, "x", encoding="utf-8") as fh:
            fh.write(text)
    elif text:
        sys.stdout.write(f"--- {printable(path)}\n{text}")
    if note:
        shown = "\n".join(printable(line) for line in note.split("\n"))
        print(shown, file=sys.stdout if not args.dry_run else sys.stderr)
    _record_cluster_id(args, cluster, state)


def _access_file(
    args: argparse.Namespace, specs: Specs, state: ClusterState
) -> tuple[str, str, str]:
    """(path, text, note) of ``access.yaml`` for the live access git does not name; checked
    before anything is written, written by ``_finish``."""
    from kgitops.access import ACCESS_PARTS, AccessState
    from kgitops.errors import ClusterError, KgitopsError
    from kgitops.plan.access_adopt import access_yaml, unmanaged
    from kgitops.spec.load import own_principal

    path = os.path.join(args.dir, ACCESS_FILE)
    if args.no_access:
        return path, "", ""
    assert specs.cluster is not None
    live = state.access
    skipped: list[str] = []
    read = list(ACCESS_PARTS)  # the parts read (all of them from a snapshot)
    if live is None and args.state is None:
        from kgitops.cluster.connect import open_cluster
        from kgitops.cluster.port import describe_access

        admin = open_cluster(specs.cluster)
        parts: list[AccessState] = []
        try:
            for part in ACCESS_PARTS:
                try:
                    parts.append(describe_access(admin, (part,)))
                except ClusterError as exc:
                    read.remove(part)
                    skipped.append(f"{part} not imported: {exc}")
        finally:
            admin.close()
        live = AccessState(
            acls=frozenset().union(*(p.acls for p in parts)),
            users={k: v for p in parts for k, v in p.users.items()},
            quotas={k: v for p in parts for k, v in p.quotas.items()},
        )
    if live is None:
        return path, "", "ACLs, SCRAM users and quotas not imported: the snapshot has none"
    from kgitops.plan.access_diff import owned_access

    adopted = unmanaged(specs.access, owned_access(live, specs.cluster.owns))
    own = own_principal(specs.cluster)
    if own is not None and any(name == own for name, _ in adopted.users):
        # a User document naming kgitops' own login is refused by validate (it would rewrite
        # the credential kgitops itself uses): that one stays out of git
        adopted = replace(adopted, users={k: v for k, v in adopted.users.items() if k[0] != own})
        skipped.append(
            "the SCRAM user kgitops logs in as is not imported: kgitops never manages its own "
            "credential"
        )
    why = "".join(f"\n{line}" for line in skipped)
    text = access_yaml(adopted, specs.cluster.name)
    if not text:
        if not read:
            return path, "", "access: nothing imported, no part could be read" + why
        return path, "", f"access: every {_PART_WORDS[tuple(read)]} of the cluster is in git" + why
    counts = (
        f"{len(adopted.acls)} ACL binding(s), {len(adopted.users)} SCRAM credential(s), "
        f"{len(adopted.quotas)} quota entit(ies)"
    )
    if args.dry_run:
        return path, text, f"would import {counts} into {path}" + why
    if os.path.lexists(path):
        raise KgitopsError(
            f"{path} exists; move it away to import the cluster's ACLs, users and quotas "
            "(or pass --no-access)"
        )
    note = (
        f"imported {counts} into {path}; set each User's passwordEnv variable before "
        "bumping its passwordVersion"
    ) + why
    return path, text, note


#: The parts read, as the summary names them.
_PART_WORDS = {
    ("acls", "users", "quotas"): "ACL, SCRAM user and quota",
    ("acls", "users"): "ACL and SCRAM user",
    ("acls", "quotas"): "ACL and quota",
    ("users", "quotas"): "SCRAM user and quota",
    ("acls",): "ACL",
    ("users",): "SCRAM user",
    ("quotas",): "quota",
}


def _record_cluster_id(args: argparse.Namespace, cluster: ClusterSpec, state: ClusterState) -> None:
    """Pin the cluster's id in cluster.yaml (appended; the rest of the file is kept)."""
    from kgitops.names import CLUSTER_FILES

    if cluster.cluster_id is not None or not state.cluster_id or args.dry_run:
        return
    for name in CLUSTER_FILES:
        path = os.path.join(args.dir, name)
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            sep = "" if text.endswith("\n") or not text else "\n"
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(f"{sep}clusterId: {json.dumps(state.cluster_id)}\n")
            print(f"recorded clusterId {state.cluster_id!r} in {path}")
            return


def _state(args: argparse.Namespace, cluster: ClusterSpec) -> ClusterState:
    if args.state is not None:
        from kgitops.cluster.snapshot import read_state

        return read_state(args.state)
    from kgitops.cluster.connect import open_cluster

    admin = open_cluster(cluster)
    try:
        return admin.describe(None)
    finally:
        admin.close()


def _report(adoptions: dict[str, Adoption], plan: Plan, args: argparse.Namespace) -> None:
    verb = "would import" if args.dry_run else "imported"
    out = sys.stdout if not args.dry_run else sys.stderr
    print(f"{verb} {len(adoptions)} topic(s) into {args.dir}:", file=out)
    for name, a in adoptions.items():
        how = {
            "recovered": (
                f"Kafka's {a.entry.placement} placement, start index {a.entry.start_index}"
            ),
            "adopted": "assignment kept as it is (adopted)",
            "rack-unaware": "assignment kept as it is (adopted, placement: rack-unaware)",
            "static": "assignment listed in the file (placement: static)",
        }[a.stage]
        print(
            printable(
                f"  {name}: {a.spec.partitions} partition(s), RF {a.spec.replication_factor}; "
                + how
            ),
            file=out,
        )
        for note in a.notes:
            print(f"    note: {printable(note)}", file=out)
    left = [action for action in plan.actions if action.topic in adoptions]
    if left:
        print("the next plan still has for the imported topics:", file=out)
        for action in left:
            print(printable(f"  {action.symbol} {action.kind} {action.topic}"), file=out)
    else:
        print("the next plan has no change for them", file=out)
