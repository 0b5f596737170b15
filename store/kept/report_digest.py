"""The few figures of a run's stored report that `engine history` (and the web's history page) show
and `engine compare` reads of earlier runs (their spread sets its gates' margins), kept beside the
report when it is written.

A run's report is its biggest record (2-3 MB of JSON at 100,000 trials): reading it back (decompress,
check its content hash, decode) cost ~6 ms per run, so a history or a comparison grew with the
earlier runs' sizes, not with how many there are. The writer's keeper stores this digest in the
transaction that stores the report (store.snapshots), `rebuild` makes it again from the report (the
same bytes), and a reader takes it only when it names the run's latest report: anything else (no
digest, an older version, another report) reads the report itself, so a digest is a shortcut, never
a second source of truth.
"""

from __future__ import annotations

import msgspec

from engine.store.contract import EventStore
from engine.store.kept.codec import KeptRecord
from engine.store.kept.read import kept_record


class DigestLatency(msgspec.Struct):
    p95: float | None = None


class DigestVariant(msgspec.Struct):
    name: str
    trials: int = 0
    scored: int = 0
    passed: int = 0
    mean_score: float | None = None
    cost_usd: float = 0.0
    latency_ms: DigestLatency = msgspec.field(default_factory=DigestLatency)
    errors: int = 0


class DigestComparison(msgspec.Struct):
    significant: bool = False
    delta: float | None = None
    more_errors: bool = False  # significantly more errors per trial than the baseline


class ReportDigest(msgspec.Struct):
    """The report's fields history reads (decoding a report into this skips the rest)."""

    variants: list[DigestVariant] = []
    comparisons: list[DigestComparison] = []
    spec_hash: str = ""
    error_rate_exceeded: bool = False
    # what the status word every surface shows is made of (events.outcome)
    status: str = ""
    trials_done: int = 0
    report_hash: str = ""  # not a report field: which report this is the digest of


# kept per run, of its latest report; no projection folds it (store.snapshots keeps and rebuilds it)
DIGESTS = KeptRecord("digest", 1, ReportDigest)


def digest_of(report: bytes, report_hash: str) -> ReportDigest:
    """The digest of a report's JSON bytes."""
    digest = msgspec.json.decode(report, type=ReportDigest)
    digest.report_hash = report_hash
    return digest


def digest_record(run_id: str, report_hash: str, stored: bytes | None) -> tuple[bytes, bytes] | None:
    """The digest's key and bytes for a report as its blob is stored; None when the blob is missing
    or damaged (a reader then reads the report, and meets the damage there)."""
    from engine.store.blobs import checked_blob  # hashlib (OpenSSL: ~4 ms) only for the writer

    report = checked_blob(report_hash, stored) if stored is not None else None
    if report is None:
        return None
    return DIGESTS.key(run_id), DIGESTS.encode(0, digest_of(report, report_hash))


def kept_digest(log: EventStore, run_id: str, report_hash: str) -> ReportDigest | None:
    """The kept digest of this report of the run; None when there is none for it."""
    stored = kept_record(log, DIGESTS, run_id)
    if stored is None or stored.state.report_hash != report_hash:
        return None
    return stored.state


def report_digest(log: EventStore, run_id: str, report_hash: str) -> ReportDigest:
    """The digest of this report of the run: kept, or made from the report when it is not."""
    kept = kept_digest(log, run_id, report_hash)
    if kept is not None:
        return kept
    from engine.store.blobs import read_blob  # hashlib: only where a report is read

    return digest_of(read_blob(log, report_hash), report_hash)
