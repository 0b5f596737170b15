"""The digest kept beside each run's report (store.report_digest): the writer keeps it in the report's
own transaction, a rebuild makes the same bytes, and history reads it instead of the report, but only
while it names the run's latest report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.store import blobs
from engine.store.blobs import read_blob
from engine.store.kept.report_digest import DIGESTS, ReportDigest, digest_of
from engine.store.kept.snapshots import RUN_HEADS, load, rebuild
from engine.store.open import open_event_log
from engine.views import history as history_view
from tests.test_cli_run import store_with_runs


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return store_with_runs(tmp_path_factory.mktemp("digest"), "r1", "r2", cases=6)


def no_report_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    read: list[str] = []

    def counted(log: Any, key: str) -> bytes:
        read.append(key)
        return read_blob(log, key)

    monkeypatch.setattr(blobs, "read_blob", counted)
    return read


def test_the_writer_keeps_what_a_rebuild_makes(store: Path, tmp_path: Path) -> None:
    with open_event_log(store, readonly=True) as log:
        kept = [log.get_snapshot(DIGESTS.key(run_id)) for run_id in ("r1", "r2")]
        report = load(log, RUN_HEADS, "r1").report_hash()
        assert report is not None
        expected = digest_of(read_blob(log, report), report)
    assert all(kept)
    stored = DIGESTS.decode(kept[0])
    assert stored is not None and stored.state == expected and stored.state.variants
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "data.mdb").write_bytes((store / "data.mdb").read_bytes())
    with open_event_log(copy) as log:
        rebuild(log)
        assert [log.get_snapshot(DIGESTS.key(run_id)) for run_id in ("r1", "r2")] == kept


def test_history_reads_the_digests_not_the_reports(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with open_event_log(store, readonly=True) as log:
        read = no_report_reads(monkeypatch)
        points = history_view.history(log, "capitals")
    assert read == [] and [p.run_id for p in points] == ["r1", "r2"]
    assert all(p.pass_rate is not None and p.spec_hash for p in points)


def test_a_digest_of_another_report_is_not_read(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "data.mdb").write_bytes((store / "data.mdb").read_bytes())
    with open_event_log(copy) as log:
        before = history_view.history(log, "capitals")
        other = ReportDigest(spec_hash="not this run's", report_hash="0" * 64)
        log.put_snapshots([(DIGESTS.key("r1"), DIGESTS.encode(0, other))])
        read = no_report_reads(monkeypatch)
        assert history_view.history(log, "capitals") == before  # r1's figures from its report
        assert len(read) == 1


def test_compare_reads_earlier_runs_digests(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.views.run_history import earlier_figures

    read = no_report_reads(monkeypatch)
    with open_event_log(store, readonly=True) as log:
        figures = earlier_figures(log, "r0", "r2")  # r1 started before r2
    assert read == [] and set(figures) == {"baseline", "cold"}
    assert all(len(runs) == 1 and runs[0][1] >= 0 for runs in figures.values())
