"""What an ``--out`` may not replace: the files the specs of a cluster folder name.

``kgitops.files.check_output`` holds the rule (endings, kinds, symlinks, empty results);
this module gives it the spec-named files of the command's own folder and of the cluster
folder the target sits in, if any (``plan A --out B/x.json`` must not replace B's
simulated state file either)::

    named = named_files("topics/prod", "out/plan.json")
    check_output("out/plan.json", PLAN_OUT, named=named)
"""

from __future__ import annotations

import os

from kgitops.names import CLUSTER_FILES
from kgitops.spec.load import Specs, load_specs

# a key of ``named_files`` that stands for every path under a folder
_ANY_IN = "\0in:"


def _cluster_folder_of(path: str) -> str | None:
    """The nearest folder holding ``path`` (itself included) with a cluster.yaml."""
    folder = os.path.dirname(os.path.realpath(path))
    while True:
        if any(os.path.isfile(os.path.join(folder, name)) for name in CLUSTER_FILES):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _named(specs: Specs) -> dict[str, str]:
    from kgitops.apply.exclusive import lock_path
    from kgitops.apply.journal import JOURNAL
    from kgitops.apply.record import record_path

    named: dict[str, str] = {}
    cluster = specs.cluster
    if cluster is None:
        # a folder whose cluster.yaml does not load names nothing kgitops can read: nothing
        # may be written into it (its state file could be anywhere in it)
        named[_ANY_IN + os.path.realpath(specs.directory)] = (
            f"inside the cluster folder {specs.directory}, whose cluster.yaml has errors"
        )
        return named
    if cluster.simulated is not None:
        state = cluster.simulated.state_file
        named[os.path.realpath(state)] = f"the simulated state file {cluster.mark} names"
        for lock in (state + ".lock",):
            named[os.path.realpath(lock)] = f"the lock of the simulated state file {state}"
    for path, what in (
        (lock_path(cluster), "apply's lock"),
        (record_path(cluster), "apply's throttle record"),
        (os.path.join(specs.directory, JOURNAL), "apply's move record"),
    ):
        named[os.path.realpath(path)] = f"{what} of {specs.directory}"
    for topic in specs.topics:
        if topic.keys is not None:
            sample = os.path.join(specs.directory, topic.keys.sample)
            named[os.path.realpath(sample)] = f"the key sample of topic {topic.name} ({topic.mark})"
    return named


def named_files(directory: str | None, target: str, specs: Specs | None = None) -> dict[str, str]:
    """Real path -> what it is, for every file a spec names in ``directory`` (its loaded
    ``specs`` when the caller has them) and in the cluster folder ``target`` would be
    written into."""
    named: dict[str, str] = {}
    seen: set[str] = set()
    if specs is not None:
        named.update(_named(specs))
        seen.add(os.path.realpath(specs.directory))
    folders = [directory, _cluster_folder_of(target)]
    for folder in folders:
        if folder is None or os.path.realpath(folder) in seen or not os.path.isdir(folder):
            continue
        seen.add(os.path.realpath(folder))
        named.update(_named(load_specs(folder)))
    return named
