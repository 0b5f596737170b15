"""Run bundles: a run leaves one store as one file and reads the same in another.

Every round trip goes through a real bundle file and a second real LMDB store; identity is checked on
the bytes of the report (stored and replayed), for each grading round."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from engine.actors.targets.target_protocol import TargetRequest
from engine.api import open_engine, spec_from_dict
from engine.errors import UserError
from engine.events.graders import ContainsGraderSpec
from engine.input.bundle_files import load_bundle
from engine.presentation.formats import export_run
from engine.runtime.bundle_import import import_bundle
from engine.runtime.regrade import regrade_run
from engine.store.bundle_format import MAGIC
from engine.store.log.event_log import EventLog
from engine.store.open import open_event_log
from engine.views.current_report import current_report_json as report_json
from engine.views.export import bundle as bundle_export
from engine.views.queries import replay_json
from tests.conftest import run_engine
from tests.fakes.openai_server import open_fake_openai
from tests.test_pairwise import prefers_good
from tests.test_pairwise import spec as pairwise_spec
from tests.test_pairwise import subject as pairwise_subject


def answer(request: TargetRequest) -> str:
    temperature = float(request.params.get("temperature", 0.7))
    return "yes" if (request.seed % 100) / 100 >= temperature * 0.8 else "no"


def small_spec(**extra: Any) -> Any:
    return spec_from_dict({
        "name": "bundled", "seed": 3,
        "target": {"kind": "python", "callable": "answer"},
        "params": {"temperature": 0.7},
        "variants": [{"name": "base"}, {"name": "cold", "params": {"temperature": 0.1}}],
        "cases": [{"id": f"c{i}", "prompt": "p", "expected": "yes"} for i in range(8)],
        "repeat": {"count": 2},
        **extra,
    })  # fmt: skip


def round_trip(source: Path, run_id: str, tmp_path: Path, as_id: str | None = None) -> Path:
    """Export from `source`, import into a fresh store; check every grading round reads the same."""
    file = tmp_path / f"{run_id}.bundle"
    with open_event_log(source) as log:
        bundle_export.write(log, run_id, file)
        gradings = _gradings(log, run_id)
        before = {g: report_json(log, run_id, g) for g in gradings}
    dest = tmp_path / f"dest-{run_id}"
    with open_event_log(dest) as log:
        new_id, outcome = import_bundle(log, load_bundle(file), str(file), as_id)
        assert outcome == "imported" and new_id == (as_id or run_id)
        for grading, data in before.items():
            stored = report_json(log, new_id, grading)
            assert stored == replay_json(log, new_id, grading)
            if as_id is None:
                assert stored == data
            else:
                assert json.loads(stored) == {**json.loads(data), "run_id": as_id}
    return dest


def _gradings(log: EventLog, run_id: str) -> list[int]:
    from engine.events import kinds as k
    from engine.store.projection import run_events

    return sorted(
        {e.grading for e in run_events(log, run_id, {"report.written"}) if isinstance(e, k.ReportWritten)}
    )


async def test_a_run_and_its_regrade_travel_byte_for_byte(tmp_path: Path) -> None:
    async with open_engine(tmp_path / "src", callables={"answer": answer}) as eng:
        await eng.run(small_spec(graders=[{"kind": "exact"}]), run_id="r1")
    with open_event_log(tmp_path / "src") as log:
        await regrade_run(log, "r1", [ContainsGraderSpec(value="y")], name="again")
        assert _gradings(log, "r1") == [0, 1]
    dest = round_trip(tmp_path / "src", "r1", tmp_path)
    with open_event_log(dest) as log:  # the outputs came along: an export of trials reads them
        lines: list[str] = []
        export_run(log, "r1", "jsonl", None, lines.append)
    assert sum(json.loads(line)["output"] in ("yes", "no") for line in "".join(lines).splitlines()) == 32


async def test_a_pairwise_round_travels(tmp_path: Path) -> None:
    async with open_fake_openai(answer=prefers_good) as server:
        async with open_engine(tmp_path / "src", callables={"subject": pairwise_subject}) as eng:
            report = await eng.run(pairwise_spec(server.base_url, cases=4, repeats=1), run_id="pw")
    assert report.pairwise and report.pairwise[0].wins == 4
    round_trip(tmp_path / "src", "pw", tmp_path)


async def test_a_tuning_session_travels_and_can_be_renamed(tmp_path: Path) -> None:
    tune = {
        "strategy": "grid", "max_experiments": 3, "min_improvement": 0.05,
        "parameters": [{"name": "temperature", "min": 0.0, "max": 1.0, "step": 0.5, "default": 0.5}],
    }  # fmt: skip
    async with open_engine(tmp_path / "src", callables={"answer": answer}) as eng:
        await eng.run(small_spec(kind="tune", variants=[], tune=tune), run_id="t1")
    round_trip(tmp_path / "src", "t1", tmp_path)
    round_trip(tmp_path / "src", "t1", tmp_path / "renamed", as_id="t1-copy")


def test_an_agent_run_travels_with_its_outputs_and_stderr(tmp_path: Path) -> None:
    agent = tmp_path / "agent.sh"
    agent.write_text('#!/bin/sh\necho "working on it" >&2\necho "done: $1"\n')
    agent.chmod(0o755)
    exp = tmp_path / "agent.toml"
    exp.write_text(
        'name = "agentic"\nseed = 1\n[target]\nkind = "command"\ncommand = ["./agent.sh", "arg"]\n'
        '[[cases]]\nid = "a"\nprompt = "fix it"\nexpected = "done"\n[[graders]]\nkind = "contains"\n'
    )
    ran = run_engine("run", str(exp), "--run-id", "ag", "-q", "--store", "src", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr.decode()
    dest = round_trip(tmp_path / "src", "ag", tmp_path)
    exported = run_engine("export", "ag", "--format", "jsonl", "--store", str(dest), cwd=tmp_path)
    record = json.loads(exported.stdout)
    assert record["output"].strip() == "done: arg" and "working on it" in record["stderr"]


@pytest.fixture
def bundled(tmp_path: Path, write_experiment: Any) -> Path:
    file = write_experiment(_cli_experiment())
    ran = run_engine("run", str(file), "--run-id", "b1", "-q", "--store", "src", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr.decode()
    out = run_engine(
        "export", "b1", "--format", "bundle", "--out", "out/b1.bundle", "--store", "src", cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr.decode()
    return tmp_path / "out" / "b1.bundle"


def _cli_experiment(seed: int = 7) -> str:
    cases = "\n".join(
        f'[[cases]]\nid = "c{i}"\nprompt = "capital {i}?"\nexpected = "City{i}"' for i in range(6)
    )
    return (
        f'name = "capitals"\nseed = {seed}\n[target]\nkind = "python"\n'
        'callable = "tests.fixtures.agent:capital"\n'
        f"[params]\ntemperature = 0.3\n[repeat]\ncount = 2\n{cases}\n"
    )


def test_import_twice_adds_nothing_and_a_different_run_needs_a_new_id(tmp_path: Path, bundled: Path) -> None:
    first = run_engine("import", str(bundled), "--store", "dest", cwd=tmp_path)
    assert first.returncode == 0 and b"imported as b1" in first.stdout, first.stderr
    with open_event_log(tmp_path / "dest") as log:
        last = log.last_seq()
    again = run_engine("import", str(bundled), "--store", "dest", cwd=tmp_path)
    assert again.returncode == 0 and b"already present as b1" in again.stdout
    with open_event_log(tmp_path / "dest") as log:
        assert log.last_seq() == last
    # another run under the same id: refused in one line, and accepted under a new one
    other = tmp_path / "other.toml"
    other.write_text(_cli_experiment(seed=8))
    assert (
        run_engine("run", str(other), "--run-id", "b1", "-q", "--store", "src2", cwd=tmp_path).returncode == 0
    )
    assert (
        run_engine(
            "export", "b1", "-f", "bundle", "-o", "b1-other.bundle", "--store", "src2", cwd=tmp_path
        ).returncode
        == 0
    )
    clash = run_engine("import", "b1-other.bundle", "--store", "dest", cwd=tmp_path)
    err = clash.stderr.decode()
    assert clash.returncode == 2 and "--as NEW_ID" in err and len(err.strip().splitlines()) == 1
    renamed = run_engine("import", "b1-other.bundle", "--as", "b1-seed8", "--store", "dest", cwd=tmp_path)
    assert renamed.returncode == 0, renamed.stderr.decode()
    replayed = run_engine("replay", "b1-seed8", "--json", "--store", "dest", cwd=tmp_path)
    assert json.loads(replayed.stdout)["run_id"] == "b1-seed8"


def test_a_bad_new_id_is_refused_before_a_store_is_made(tmp_path: Path, bundled: Path) -> None:
    refused = run_engine("import", str(bundled), "--as", "no/such id", "--store", "fresh", cwd=tmp_path)
    err = refused.stderr.decode()
    assert refused.returncode == 2 and len(err.strip().splitlines()) == 1 and "--as" in err
    assert not (tmp_path / "fresh").exists()


@pytest.mark.parametrize("damage", ["truncate", "flip", "not-a-bundle"])
def test_a_damaged_bundle_is_refused_and_leaves_nothing(tmp_path: Path, bundled: Path, damage: str) -> None:
    data = bundled.read_bytes()
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        middle = len(data) // 2
        data = data[:middle] + bytes([data[middle] ^ 0x10]) + data[middle + 1 :]
    else:
        data = b'{"not": "a bundle"}'
    bad = tmp_path / "bad.bundle"
    bad.write_bytes(data)
    assert run_engine("import", str(bundled), "--store", "dest", cwd=tmp_path).returncode == 0
    with open_event_log(tmp_path / "dest") as log:
        last = log.last_seq()
    refused = run_engine("import", str(bad), "--as", "other", "--store", "dest", cwd=tmp_path)
    err = refused.stderr.decode()
    assert refused.returncode == 2 and len(err.strip().splitlines()) == 1 and "bad.bundle" in err
    assert (
        "truncated" in err or "damaged" in err or "not an engine bundle" in err
    ) and "Traceback" not in err
    with open_event_log(tmp_path / "dest") as log:
        assert log.last_seq() == last and log.run_ids() == ["b1"]


def test_every_single_byte_flip_is_refused(bundled: Path) -> None:
    import io

    from engine.store.bundle_format import BundleError, read_bundle

    data = bundled.read_bytes()
    for pos in range(0, len(data), max(1, len(data) // 200)):
        flipped = data[:pos] + bytes([data[pos] ^ 0x01]) + data[pos + 1 :]
        with pytest.raises(BundleError):
            read_bundle(io.BytesIO(flipped), "x.bundle")
    assert data.startswith(MAGIC)


def test_a_bundle_reports_and_serves_without_importing(tmp_path: Path, bundled: Path) -> None:
    from tests.serve_helpers import serving

    html = run_engine("report", str(bundled), "--html", "page.html", cwd=tmp_path)
    assert html.returncode == 0, html.stderr.decode()
    assert "capitals" in (tmp_path / "page.html").read_text()
    stored = run_engine("report", "b1", "--json", "--store", "src", cwd=tmp_path)
    direct = run_engine("report", str(bundled), "--json", cwd=tmp_path)
    assert direct.stdout == stored.stdout and not (tmp_path / ".engine").exists()
    import httpx

    (tmp_path / "nostore").mkdir()
    with serving(tmp_path / "nostore", "--bundle", str(bundled)) as url:
        runs = httpx.get(f"{url}/api/runs").json()
        assert [r["run_id"] for r in runs] == ["b1"]
        assert httpx.get(f"{url}/api/runs/b1").json()["experiment"] == "capitals"


def test_a_running_run_is_not_exported(tmp_path: Path) -> None:
    from engine.store.memory import MemoryStore

    log = MemoryStore()
    from engine.events import kinds as k
    from engine.events.codec import encode

    started = k.RunStarted(run_id="live", ts=1.0, experiment="x", trials_total=1, pid=1, host="elsewhere")
    log.append([("live", "run.started", encode(started))])
    with pytest.raises(UserError, match="still running"):
        bundle_export.write(log, "live", tmp_path / "live.bundle")
    assert not (tmp_path / "live.bundle").exists()


async def test_labels_travel_with_the_run(tmp_path: Path) -> None:
    from engine.input.labels_file import LabelRow
    from engine.runtime.label_record import record_labels
    from tests.label_runs import judged_run

    await judged_run(tmp_path / "src", "lab")
    label = LabelRow(case="c0", variant="baseline", repeat=1, verdict="pass")
    rows = [("row 1", label), ("row 2", msgspec.structs.replace(label, case="c7"))]
    with open_event_log(tmp_path / "src") as log:
        assert record_labels(log, "lab", rows) == 2
    dest = round_trip(tmp_path / "src", "lab", tmp_path)
    with open_event_log(dest) as log:
        section = json.loads(report_json(log, "lab"))["label_agreement"]
    assert section["labels"] == 2 and section["judges"][0]["disagreements"][0]["case"] == "c7"


def test_a_bundle_path_that_does_not_exist_is_named(tmp_path: Path) -> None:
    done = run_engine("report", "nope.bundle", cwd=tmp_path)
    err = done.stderr.decode()
    assert done.returncode == 2 and err.strip() == (
        "error: nope.bundle: RUN_ID: no such bundle file (a run id, or a .bundle file's path)"
    )


def test_the_cycle_collector_pauses_for_an_import_and_comes_back(tmp_path: Path, bundled: Path) -> None:
    """Import keeps the whole bundle alive through one transaction: full collections would walk it
    again and again (time per trial growing with the bundle), so the collector is off for it, and on
    again after it, whether it imported, found the run already there or refused a different one."""
    import gc

    bundle = load_bundle(bundled)
    seen: list[bool] = []
    with open_event_log(tmp_path / "dest") as log:
        append = log.append

        def watched_append(*args: Any, **kwargs: Any) -> Any:
            seen.append(gc.isenabled())
            return append(*args, **kwargs)

        log.append = watched_append  # type: ignore[method-assign]
        assert import_bundle(log, bundle, "b1.bundle") == ("b1", "imported")
        assert seen == [False] and gc.isenabled()
        assert import_bundle(log, bundle, "b1.bundle") == ("b1", "already present")
        assert gc.isenabled()
        other = msgspec.structs.replace(bundle, events=bundle.events[:-1])
        with pytest.raises(UserError):
            import_bundle(log, other, "other.bundle")
        assert gc.isenabled()
