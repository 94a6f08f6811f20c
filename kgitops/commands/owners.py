"""``kgitops owners DIR [--release [OWNER]]``: the owner records on DIR's cluster.

Each apply of a folder with ``owns:`` records what it owns on its cluster, so another
repository's overlapping claim is refused (docs/ownership.md). This lists every record, the
folder's own marked, and releases one (a tombstone: the owner claims nothing any more)::

    $ kgitops owners topics/payments
    github.com/acme/a topics/payments  (this folder)  topics: payments.*; principals: User:pay-*
    team-b  from github.com/acme/b topics/b  topics: b.*

    $ kgitops owners topics/payments --release
    released the record of "github.com/acme/a topics/payments" in topic _kgitops-owners

``--release`` alone releases this folder's record (it is written again by its next apply
while cluster.yaml still has ``owns:``); ``--release OWNER`` another's, as a last resort for
an owner whose folder is gone (kgitops cannot tell: ask the owner first; an owner that
still exists is refused by its next plan once another record overlaps its claim). Exit 1
when there is no such record.
"""

from __future__ import annotations

import argparse
import json

NAME = "owners"
HELP = "list the owner records on a folder's cluster (who owns what), or release one"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("directory", metavar="DIR", help="a cluster folder")
    parser.add_argument(
        "--release",
        nargs="?",
        const="",
        default=None,
        metavar="OWNER",
        help="release this folder's owner record, or OWNER's (as `kgitops owners` lists it; "
        "another owner's only when its folder is gone)",
    )


def run(args: argparse.Namespace) -> int:
    from kgitops.cluster.connect import open_cluster
    from kgitops.commands._clusterdir import load_cluster, readable_cluster
    from kgitops.commands._owners import owner_of
    from kgitops.errors import KgitopsError, printable
    from kgitops.model import OWNED_KINDS, OWNER_TOPIC

    releasing = args.release is not None
    cluster = (load_cluster if releasing else readable_cluster)(args.directory)
    me = owner_of(cluster)[0] if cluster.owns.declared or args.release == "" else None
    admin = open_cluster(cluster)
    try:
        records = admin.read_owners()
        if releasing:
            owner = args.release or me
            assert owner is not None  # --release alone sets me
            if owner not in records:
                raise KgitopsError(
                    f"no owner record of {json.dumps(owner)} in topic {OWNER_TOPIC} on cluster "
                    f"{cluster.name!r} (`kgitops owners {args.directory}` lists them)"
                )
            admin.record_owners({owner: None})
            print(printable(f"released the record of {json.dumps(owner)} in topic {OWNER_TOPIC}"))
            return 0
    finally:
        admin.close()
    if not records:
        print(f"no owner records on cluster {cluster.name!r} (topic {OWNER_TOPIC})")
        return 0
    for owner, record in sorted(records.items()):
        parts = [owner]
        if owner == me:
            parts.append("(this folder)")
        elif record.source and record.source != owner:
            parts.append(f"from {record.source}")
        if record.problem:
            parts.append(f"unreadable: {record.problem}")
        else:
            claimed = [
                f"{kind}: {', '.join(record.owns.patterns(kind))}"
                for kind, _ in OWNED_KINDS
                if record.owns.patterns(kind)
            ]
            parts.append("; ".join(claimed) or "nothing")
        print(printable("  ".join(parts)))
    return 0
