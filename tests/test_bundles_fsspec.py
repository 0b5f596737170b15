"""Bundles in object storage: `--out` and `--from` take fsspec URLs (tested on fsspec's memory and
local filesystems, which behave as s3:// or gs:// do behind the same interface)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import fsspec

from engine.api import open_engine
from engine.input.bundle_files import bundle_headers, load_bundle
from engine.store.log.event_log import EventLog
from engine.store.open import open_event_log
from engine.views.bundle_sources import last_green_anywhere
from engine.views.compare.comparison import compare_runs
from engine.views.current_report import current_report_json as report_json
from engine.views.export import bundle as bundle_export
from tests.conftest import run_engine
from tests.test_bundles import answer, small_spec


async def test_export_to_and_gate_from_a_memory_bucket(tmp_path: Path) -> None:
    bucket = f"memory://bucket-{uuid.uuid4().hex[:8]}/ci-bundles"
    async with open_engine(tmp_path / "a", callables={"answer": answer}) as eng:
        await eng.run(small_spec(), run_id="green-1")
    with open_event_log(tmp_path / "a") as log:
        bundle_export.write(log, "green-1", f"{bucket}/green-1.bundle")
        expected = report_json(log, "green-1")
    assert [h.run_id for _, h in bundle_headers(bucket, "--from")] == ["green-1"]
    assert report_json(*_single(load_bundle(f"{bucket}/green-1.bundle"))) == expected

    async with open_engine(tmp_path / "b", callables={"answer": answer}) as eng:  # another runner
        await eng.run(small_spec(), run_id="cand")
    with open_event_log(tmp_path / "b") as log:
        found = last_green_anywhere(log, "bundled", "cand", bucket)
        assert found is not None and found[1] == "green-1"
        store, base = found
        result = compare_runs(store, base, "cand", log_spec_gate(log))
    # the same seeds give the same answers (latency, a property of the machine, is not asserted)
    outcomes = [m for m in result.metrics if m.metric in ("pass_rate", "mean_score")]
    assert len(outcomes) == 4 and all(m.delta == 0 and not m.regressed for m in outcomes)


def test_the_cli_takes_a_file_url(tmp_path: Path) -> None:
    exp = tmp_path / "exp.toml"
    exp.write_text(
        'name = "u"\nseed = 1\n[[cases]]\nid = "a"\nprompt = "hello"\nexpected = "hello"\n'
        '[[graders]]\nkind = "contains"\n'
    )
    assert run_engine("run", str(exp), "--run-id", "u1", "-q", "--store", "s1", cwd=tmp_path).returncode == 0
    url = f"file://{tmp_path}/remote/u1.bundle"
    out = run_engine("export", "u1", "--format", "bundle", "--out", url, "--store", "s1", cwd=tmp_path)
    assert out.returncode == 0, out.stderr.decode()
    assert fsspec.filesystem("file").exists(f"{tmp_path}/remote/u1.bundle")
    imported = run_engine("import", url, "--store", "s2", cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr.decode()
    a = run_engine("report", "u1", "--json", "--store", "s1", cwd=tmp_path)
    b = run_engine("replay", "u1", "--json", "--store", "s2", cwd=tmp_path)
    assert a.stdout == b.stdout and json.loads(a.stdout)["run_id"] == "u1"


def _single(bundle: object) -> tuple[object, str]:
    from engine.views.bundle_sources import store_of_bundles

    store = store_of_bundles([("b", bundle)])  # type: ignore[list-item]
    return store, store.run_ids()[0]


def log_spec_gate(log: EventLog) -> object:
    from engine.runtime.run_status import run_state

    spec = run_state(log, "cand").spec
    assert spec is not None
    return spec.gate



def test_a_url_whose_filesystem_is_missing_or_unknown_is_one_line(tmp_path: Path) -> None:
    """fsspec names schemes whose package may be absent (dropbox:// needs dropboxdrivefs) and refuses
    schemes it does not know: either is one line, exit 2, for every command that takes a URL."""
    import importlib.util

    assert importlib.util.find_spec("dropboxdrivefs") is None  # the premise: its package is absent
    exp = tmp_path / "exp.toml"
    exp.write_text('name = "u"\nseed = 1\n[[cases]]\nid = "a"\nprompt = "hello"\nexpected = "hello"\n')
    assert run_engine("run", str(exp), "--run-id", "r", "-q", "--store", "st", cwd=tmp_path).returncode == 0
    for url in ("dropbox://bucket/ci-bundles", "no-such-scheme://bucket/ci-bundles"):
        for args in (
            ("import", f"{url}/r.bundle"),
            ("report", f"{url}/r.bundle"),
            ("export", "r", "--format", "bundle", "--out", f"{url}/r.bundle"),
            ("compare", "last-green", "r", "--gate", "--from", url),
        ):
            done = run_engine(*args, "--store", "st", cwd=tmp_path)
            err = done.stderr.decode()
            assert done.returncode == 2 and len(err.strip().splitlines()) == 1, (args, err)
            assert url in err and "Traceback" not in err, (args, err)
