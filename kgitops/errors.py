"""The error tree of kgitops, and the positioned diagnostics that validation reports.

Every failure a user can meet is one of these; ``cli.main`` maps them to exit codes in one
place. No third-party exception (kafka-python, PyYAML, jsonschema, pyspark) may cross a module
boundary: each adapter translates at its edge.

::

    KgitopsError                      exit 1 unless noted
     ├── SpecError                    invalid specs: carries every Diagnostic, sorted
     ├── LockError                    kgitops.lock missing, unreadable or stale (--locked)
     ├── FileRefused                  a file or path refused: outside the cluster folder, a
     │                                symlink, not a regular file, too big, binary, too deep
     ├── AssignmentError              impossible placement input (Kafka's own errors)
     │    ├── InvalidPartitions        partitions < 1
     │    ├── InvalidReplicationFactor RF < 1 or above the broker count
     │    ├── BrokerMetadataError      racks given for some brokers only
     │    ├── PlacementOverflow        inputs past Kafka's 32-bit placement arithmetic
     │    └── InvalidReplicaAssignment a static assignment Kafka's controller would refuse
     ├── PlanError                    a plan cannot be computed, read or trusted
     │    ├── StateFileError           a state file (snapshot, simulated cluster) is unreadable
     │    ├── WrongCluster             the cluster's id is not the clusterId cluster.yaml pins
     │    └── PlanRefused              a plan refused, with one line per reason
     │         ├── StalePlan           the cluster changed since the plan was made
     │         ├── UnreviewedPlan      a saved plan holds actions its specs do not produce
     │         ├── ConnectionChanged   cluster.yaml connects elsewhere; not allowed here
     │         └── UnsafePlan          a safety gate refused the plan
     │              ├── DeletionNotAllowed  delete_topic without --allow-delete
     │              ├── UnsafeReplication   RF below min.insync.replicas
     │              ├── OfflineTarget       a move onto an offline broker
     │              ├── TimeoutTooShort     the plan's ETA exceeds the apply timeout
     │              └── CleartextCredentials  SCRAM credentials over a connection without TLS
     ├── ApplyInProgress              another apply holds the cluster's apply lock
     ├── PartialApply                 apply finished partly (exit 3): outcomes and notes
     │    ├── NothingApplied           apply changed nothing (exit 1)
     │    └── InterruptedBeforeAnyChange  a signal stopped apply before any change (exit 130)
     ├── ClusterError                 anything from talking to a cluster
     │    ├── ClusterUnreachable       no connection, DNS, refused, down
     │    ├── ClusterTimeout           no answer in time
     │    ├── ClusterAuthError         authentication or authorisation failed
     │    ├── ClusterTlsError          TLS cannot work: untrusted, expired or misnamed broker
     │    │                            certificate, client certificate missing or refused,
     │    │                            plaintext and TLS mixed up, an unusable key or CA file
     │    ├── UnsupportedOperation     the broker lacks an API ("does not support CreatePartitions")
     │    │    └── AccessUnsupported   an access API not listed, or a small probe of it not
     │    │         │                  answered in a few seconds (refused before any change)
     │    │         └── AccessUnsupportedNothingChanged  the same, said by apply: its message
     │    │                            ends "nothing was changed"
     │    ├── LocalBrokerError         the local broker cannot be started, found or stopped
     │    └── ClusterRequestError      the broker refused a request (per topic, with Kafka's code)
     ├── AnalyticsError               the Spark job cannot run or its input is bad
     └── GitHubError                  the GitHub API refused or failed
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Literal

Severity = Literal["error", "warning"]

_MAX_REPORTED = 20  # problems a StateFileError shows


_CONTROLS = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]"
)


def printable(text: str) -> str:
    """``text`` on one line of a terminal or a workflow log: every control character (a
    newline, an escape sequence's ESC) and direction override shown as ``\\xNN`` /
    ``\\uNNNN``, so a file or topic name cannot add a line, start a workflow command or
    repaint the terminal (as ``plan.mdescape.visible`` does for a comment)::

        printable("a\\n::error::x\\x1b[2J")  -> 'a\\x0a::error::x\\x1b[2J'
    """
    if _CONTROLS.search(text) is None:
        return text
    return _CONTROLS.sub(
        lambda m: (
            f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}"
        ),
        text,
    )


@dataclass(frozen=True, order=True, slots=True)
class Mark:
    """A position in a source file, 1-based line and column, as editors count them."""

    path: str
    line: int = 1
    col: int = 1

    def __str__(self) -> str:
        return f"{printable(self.path)}:{self.line}:{self.col}"


@dataclass(frozen=True, order=True, slots=True)
class Diagnostic:
    """One problem found in the specs: ``path:line:col: error: message``.

    Ordering is by position, then severity, then message, so output is stable and sorted.
    """

    mark: Mark
    severity: Severity
    message: str

    def __str__(self) -> str:
        return f"{self.mark}: {self.severity}: {printable(self.message)}"

    @property
    def is_error(self) -> bool:
        return self.severity == "error"


class KgitopsError(Exception):
    """The root of every error kgitops reports to a user."""

    exit_code: int = 1

    def lines(self) -> list[str]:
        """What the CLI prints, one line each, to stderr."""
        return [f"error: {self}"]


class SpecError(KgitopsError):
    """The specs are invalid. Carries every diagnostic, not only the first."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics = sorted(diagnostics)
        errors = [d for d in self.diagnostics if d.is_error]
        super().__init__(f"{len(errors)} error(s) in the specs")

    def lines(self) -> list[str]:
        return [str(d) for d in self.diagnostics]


class LockError(KgitopsError):
    """kgitops.lock is missing, unreadable or does not match the specs (with --locked)."""


class FileRefused(KgitopsError):
    """A file kgitops will not read or write, or a spec path it will not follow:
    ``path[:line:col]: error: reason`` (see ``kgitops.files``)."""

    def __init__(self, mark: Mark, reason: str) -> None:
        self.mark = mark
        self.reason = reason
        super().__init__(f"{mark}: error: {reason}")

    def lines(self) -> list[str]:
        return [str(self)]


class AssignmentError(KgitopsError):
    """Placement input Kafka itself would refuse."""


class InvalidPartitions(AssignmentError):
    """Kafka's InvalidPartitionsException: the number of partitions must be at least 1."""


class InvalidReplicationFactor(AssignmentError):
    """Kafka's InvalidReplicationFactorException."""


class BrokerMetadataError(AssignmentError):
    """Kafka's AdminOperationException: not all brokers have rack information."""


class PlacementOverflow(AssignmentError):
    """Placement inputs (start index, partition ids, racks) for which Kafka's int arithmetic
    in AdminUtils overflows: Kafka would throw or place off its own rule."""


class InvalidReplicaAssignment(AssignmentError):
    """Kafka's InvalidReplicaAssignmentException, as the controller raises it."""


class PlanError(KgitopsError):
    """A plan cannot be computed, read or trusted."""


class StateFileError(PlanError):
    """A state file (snapshot or simulated cluster) is unreadable or has the wrong shape.

    Carries every problem found (up to twenty), each naming the file and where in it.
    """

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        first = problems[0] if problems else "invalid state file"
        super().__init__(first if first.startswith(source) else f"{source}: {first}")

    def lines(self) -> list[str]:
        shown = [
            p if p.startswith(self.source) else f"{self.source}: error: {p}"
            for p in self.problems[:_MAX_REPORTED]
        ]
        if len(self.problems) > _MAX_REPORTED:
            shown.append(f"{self.source}: ... and {len(self.problems) - _MAX_REPORTED} more")
        return shown


class PlanRefused(PlanError):
    """A plan refused for the reasons it carries, each printed on an indented line below the
    message (after ``reason_prefix``)."""

    reason_prefix: str = ""

    def __init__(self, message: str, reasons: Iterable[str] = ()) -> None:
        self.reasons = list(reasons)
        super().__init__(message)

    def lines(self) -> list[str]:
        return [f"error: {self}", *(f"  {self.reason_prefix}{r}" for r in self.reasons)]


class StalePlan(PlanRefused):
    """The live cluster changed since the plan was made; its reasons say what changed."""

    @property
    def changes(self) -> list[str]:
        return self.reasons


class UnreviewedPlan(PlanRefused):
    """A saved plan holds actions its specs do not produce (or is not a valid plan file):
    what would be applied is not what was reviewed. ``reasons`` names each one."""


class WrongCluster(PlanError):
    """The cluster behind the address reports another id than cluster.yaml's clusterId."""


class ConnectionChanged(PlanRefused):
    """cluster.yaml changes how kgitops connects (hosts, security, credential variables,
    TLS files, the simulated cluster) and that change was not explicitly allowed."""

    reason_prefix = "CONNECTION_CHANGED "


class UnsafePlan(PlanRefused):
    """A safety gate on the plan refused it."""


class DeletionNotAllowed(UnsafePlan):
    """The plan deletes topics and --allow-delete was not given."""


class UnsafeReplication(UnsafePlan):
    """A topic would have a replication factor below its min.insync.replicas."""


class OfflineTarget(UnsafePlan):
    """A move targets a broker that is offline."""


class TimeoutTooShort(UnsafePlan):
    """The plan's reassignments take longer than apply may wait: at the timeout apply would
    cancel the moves in flight and throw their copying away."""


class CleartextCredentials(UnsafePlan):
    """The plan writes SCRAM credentials (upsert_user) over a connection without TLS and
    cluster.yaml does not say so (security.allowCleartextCredentials)."""


class ApplyInProgress(KgitopsError):
    """Another ``kgitops apply`` holds this cluster's apply lock; nothing was changed."""


class Status(Enum):
    """What became of one plan action; apply's exit code is decided from these alone."""

    DONE = "done"
    FAILED = "failed"
    SKIPPED = "skipped"  # an earlier action on the same topic failed
    IN_FLIGHT = "in flight"  # submitted and still running (--no-wait): not a failure
    DEFERRED = "deferred"  # left for a later apply, as --no-wait does past its one window
    NOT_ATTEMPTED = "not attempted"  # the run stopped first (lost cluster, signal)
    IN_DOUBT = "in doubt"  # sent, no answer: it may or may not have taken effect


ITEMS_SHOWN = 10
_LABELS = {Status.DONE: "done", Status.IN_FLIGHT: "running", Status.DEFERRED: "deferred"}


@dataclass(frozen=True)
class ActionOutcome:
    """What happened to one plan action during apply: a status, the reason, and per-item
    details (one partition each) that a report prints one a line, at most ``ITEMS_SHOWN``.
    ``kind`` and ``subject``: the action's plan JSON ``type`` and what it is about (the
    topic), for ``apply --format json``."""

    action: str
    status: Status
    reason: str = ""
    items: tuple[str, ...] = ()
    kind: str = ""
    subject: str = ""

    @property
    def done(self) -> bool:
        return self.status is Status.DONE

    @property
    def detail(self) -> str:
        """The parenthesis of the report line: ``failed: <reason>`` (``<reason>`` if done)."""
        if self.status in (Status.DONE, Status.DEFERRED):
            return self.reason
        return f"{self.status.value}: {self.reason}" if self.reason else self.status.value

    def lines(self, indent: str = "", limit: int = ITEMS_SHOWN) -> list[str]:
        """``NOT done: ~ reassign a (failed: ...)`` and its items, one a line, capped."""
        label = _LABELS.get(self.status, "NOT done")
        head = f"{indent}{label}: {self.action}" + (f" ({self.detail})" if self.detail else "")
        shown = self.items if limit <= 0 else self.items[:limit]
        more = len(self.items) - len(shown)
        tail = [f"{indent}    ... and {more} more"] if more else []
        return [head, *(f"{indent}    {i}" for i in shown), *tail]


class PartialApply(KgitopsError):
    """Apply finished partly. ``outcomes`` says per action what was done and what was not;
    ``notes`` are what apply noticed on the way (shown before the closing hint); ``report``
    the whole apply report when apply ran (its requests too, for ``apply --format json``)."""

    exit_code = 3
    report: object | None = None

    def __init__(
        self, message: str, outcomes: Iterable[ActionOutcome] = (), notes: Iterable[str] = ()
    ) -> None:
        self.outcomes = list(outcomes)
        self.notes = list(notes)
        super().__init__(message)

    def lines(self) -> list[str]:
        out = [f"error: {self}"]
        for o in self.outcomes:
            out.extend(o.lines("  "))
        out.extend(self.notes)
        out.append("  run `kgitops plan` again: it picks up what was not done")
        return out


class NothingApplied(PartialApply):
    """Apply changed nothing (e.g. the cluster was unreachable from the start): exit 1."""

    exit_code = 1


class InterruptedBeforeAnyChange(PartialApply):
    """A signal (Ctrl-C, SIGTERM, SIGHUP) stopped apply before it changed anything: 130."""

    exit_code = 130


class ClusterError(KgitopsError):
    """Talking to a cluster failed. The message says what to do about it."""


class ClusterUnreachable(ClusterError):
    """No connection could be made (refused, DNS, broker down)."""


class ClusterTimeout(ClusterError):
    """The cluster did not answer in time."""


class ClusterAuthError(ClusterError):
    """Authentication or authorisation failed."""


class ClusterTlsError(ClusterError):
    """A TLS failure no retry can fix; the message names the cause and what to check."""


class UnsupportedOperation(ClusterError):
    """The broker does not support an admin API kgitops needs."""

    def __init__(self, operation: str, detail: str = "") -> None:
        self.operation = operation
        msg = f"the broker does not support {operation}"
        super().__init__(msg + (f": {detail}" if detail else ""))


class AccessUnsupported(UnsupportedOperation):
    """The cluster does not serve an access API (ACLs, SCRAM credentials, client quotas): its
    ApiVersions answer does not list it, or a small probe of it got no well-formed answer
    within a few seconds. Raised before that access is read or changed (docs/access.md)."""

    def __init__(self, operation: str, message: str) -> None:
        self.operation = operation
        ClusterError.__init__(self, message)


class AccessUnsupportedNothingChanged(AccessUnsupported):
    """An AccessUnsupported raised before apply changed anything, its message saying so
    (``kgitops.apply.access.before_any_change``); nested, that is said once."""


class LocalBrokerError(ClusterError):
    """The local broker cannot be started, found or stopped."""


class ClusterRequestError(ClusterError):
    """The broker refused a request (the error code and message are Kafka's). ``changed``:
    the item is not done, yet the cluster did change (a SCRAM credential written whose
    passwordVersion could not be recorded): apply exits 3, not 1."""

    def __init__(self, message: str, code: str = "", item: str = "", changed: bool = False) -> None:
        self.code = code
        self.item = item
        self.changed = changed
        super().__init__(message)


class AnalyticsError(KgitopsError):
    """The key analysis cannot run, or its input is unusable."""


class GitHubError(KgitopsError):
    """The GitHub API refused or failed a request."""


# Every secret value kgitops has read in this process (SASL passwords, TLS key passwords,
# OAUTHBEARER tokens, SCRAM users' passwords, the GitHub token): what the CLI's last guard
# scrubs from every message it prints, as the Kafka adapter scrubs its own messages. A user
# name is not a secret (brokers and ACLs show it) and is never registered: masked, ``kafka``
# would turn ``kafka.invalid:9092`` into ``***.invalid:9092``.
_KNOWN_SECRETS: list[str] = []

# What may stand on either side of a secret shown whole: the start or end of the text,
# white space and control characters, quotes, brackets and the separators of ``key=value``,
# ``user:password@host`` and lists. A secret glued to letters, digits, dots, dashes,
# underscores or slashes is part of another word (a host name, a path) and is left alone;
# a dot, ``!`` or ``?`` right after it counts as a boundary only at the end of a sentence.
_APART = "\\s\\x00-\\x1f\\x7f\"'`=:,;@()\\[\\]{}<>"
_BEFORE = f"(?<![^{_APART}])"
_AFTER = f"(?=[{_APART}]|[.!?](?:[{_APART}]|$)|$)"


#: A secret this long or longer is masked wherever it stands, even inside other text (no
#: host name or path holds a long random secret by chance); a shorter one only where it
#: stands whole, so a short password such as ``kafka`` leaves ``kafka.invalid`` alone.
WHOLE_ONLY_BELOW = 8


def _whole(secret: str) -> str:
    """The pattern of ``secret`` standing alone (one that begins or ends with a separator
    is apart on that side already: ``=hunter2`` inside ``password=hunter2``)."""
    before = "" if re.match(f"[{_APART}]", secret[0]) else _BEFORE
    after = "" if re.match(f"[{_APART}]", secret[-1]) else _AFTER
    return before + re.escape(secret) + after


def remember_secrets(values: Iterable[str]) -> None:
    """Record secret values so that no message printed by this process shows them."""
    for value in values:
        if value and value not in _KNOWN_SECRETS:
            _KNOWN_SECRETS.append(value)


def scrub_secrets(text: str, secrets: Iterable[str] | None = None) -> str:
    """``text`` with each of ``secrets`` (default: every value remembered so far) as ``***``
    wherever it stands as a whole value, never inside another word; longest first, so a
    secret that contains another is hidden whole. A secret of WHOLE_ONLY_BELOW characters
    or more is masked wherever it appears (``alice/hunter2x``, ``token-hunter2x``, its JSON
    or repr() escaped form too); a shorter one only as a whole value. With ``kafka``::

        "password kafka refused"     -> "password *** refused"
        'password="kafka";'          -> 'password="***";'
        "kafka.invalid:9092"         -> unchanged (a host name)
        "topics/kafka/cluster.yaml"  -> unchanged (a path)
    """
    values = _KNOWN_SECRETS if secrets is None else list(secrets)
    forms = set()
    for secret in values:
        if secret:
            forms.add(secret)
            forms.add(json.dumps(secret)[1:-1])  # as a JSON string or repr() shows it
            forms.add(repr(secret)[1:-1])
    for secret in sorted(forms, key=len, reverse=True):
        if secret not in text:
            continue
        if len(secret) >= WHOLE_ONLY_BELOW:  # a long secret is never another word's part
            text = text.replace(secret, "***")
        else:
            text = re.sub(_whole(secret), "***", text)
    return text


def forget_secrets() -> None:
    """Start afresh (a process that runs several unrelated commands: the test suite)."""
    _KNOWN_SECRETS.clear()
