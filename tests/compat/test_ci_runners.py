"""Gates on shared CI runners, with Keystone's spec and real agents: each run records the machine it
ran on, latency is compared between runs of one machine only (unless asked), a damaged bundle in
`--from DIR` is skipped with a warning naming it, and a rerun narrowed by --case/--variant is never
the last green by itself and stays out of `history` unless --all."""

from __future__ import annotations

import json
from pathlib import Path

from engine.events import kinds as k
from engine.store.open import open_event_log
from engine.store.projection import run_events
from tests.compat.helpers import keystone_spec, write_script
from tests.conftest import run_engine

SPEC = keystone_spec(replicas=2)

FAST = 'read prompt\necho "tests pass"\n'
# the gates below are about the baseline they find, not latency: this shared machine's noise is not gated
LOOSE = ("--max-p95-latency-increase", "100")
# the same code on a runner many times slower: 0.6 s more a trial, so that a loaded CI machine's slow
# start of the fast agent (a few hundred ms at worst) cannot hide the slowdown the gate must see
SLOW = 'read prompt\nsleep 0.6\necho "tests pass"\n'


def _run(folder: Path, run_id: str, agent: str, *extra: str, store: str = "st", machine: str = "") -> None:
    write_script(folder / "bin" / "my-agent", agent)
    (folder / "spec.yaml").write_text(SPEC)
    env = {"ENGINE_MACHINE": machine} if machine else {}
    ran = run_engine(
        "run", "spec.yaml", "-q", "--run-id", run_id, *extra, "--store", store, cwd=folder, **env
    )
    assert ran.returncode == 0, ran.stderr.decode()


def _started(folder: Path, run_id: str, store: str = "st") -> k.RunStarted:
    with open_event_log(folder / store) as log:
        return next(e for e in run_events(log, run_id) if isinstance(e, k.RunStarted))


def test_latency_is_compared_between_runs_of_one_machine_unless_asked(tmp_path: Path) -> None:
    _run(tmp_path, "base", FAST, machine="ci-large-runner")
    _run(tmp_path, "cand", SLOW, machine="ci-small-runner")
    started = _started(tmp_path, "cand")
    assert (started.cpu_model, started.cpu_cores > 0) == ("ci-small-runner", True)
    gated = run_engine("compare", "base", "cand", "--gate", "--json", "--store", "st", cwd=tmp_path)
    assert gated.returncode == 0, gated.stdout.decode()
    result = json.loads(gated.stdout)
    (latency,) = [m for m in result["metrics"] if m["metric"] == "p95_latency_ms"]
    assert latency["note"] == "not compared: different machines" and not latency["regressed"]
    assert any("ci-large-runner" in w and "ci-small-runner" in w for w in result["warnings"])
    text = run_engine("compare", "base", "cand", "--store", "st", cwd=tmp_path).stdout.decode()
    assert "not compared: different machines" in " ".join(text.split())
    across = run_engine("compare", "base", "cand", "--gate", "--latency-across-machines", "--store", "st",
                        cwd=tmp_path)  # fmt: skip
    assert across.returncode == 1 and "p95_latency_ms" in across.stdout.decode()
    _run(tmp_path, "cand-2", SLOW, machine="ci-large-runner")  # one machine: a real slowdown
    same = run_engine("compare", "base", "cand-2", "--gate", "--store", "st", cwd=tmp_path)
    assert same.returncode == 1 and "p95_latency_ms" in same.stdout.decode()


def test_this_machines_cpu_is_recorded_without_a_name_given(tmp_path: Path) -> None:
    _run(tmp_path, "base", FAST)
    started = _started(tmp_path, "base")
    assert started.cpu_model and started.cpu_model != "unknown" and started.cpu_cores >= 1


def test_a_damaged_bundle_in_from_dir_is_skipped_with_a_warning(tmp_path: Path) -> None:
    _run(tmp_path, "nightly-1", FAST, store="ci-cache")
    bundles = tmp_path / "bundles"
    out = str(bundles / "nightly-1.bundle")
    exported = run_engine("export", "nightly-1", "--format", "bundle", "--out", out, "--store", "ci-cache",
                          cwd=tmp_path)  # fmt: skip
    assert exported.returncode == 0, exported.stderr.decode()
    whole = (bundles / "nightly-1.bundle").read_bytes()
    (bundles / "nightly-2.bundle").write_bytes(whole[: len(whole) * 2 // 3])  # an upload cut off
    (bundles / "nightly-0.bundle").write_bytes(whole[:10])  # not even a header
    _run(tmp_path, "pr-7", FAST)
    gated = run_engine("compare", "last-green", "pr-7", "--from", str(bundles), "--gate", "--json", *LOOSE,
                       "--store", "st", cwd=tmp_path)  # fmt: skip
    assert gated.returncode == 0, gated.stderr.decode()
    result = json.loads(gated.stdout)
    assert result["baseline_run"] == "nightly-1"
    skipped = [w for w in result["warnings"] if w.startswith("skipped damaged bundle")]
    assert sorted(Path(w.split()[3].rstrip(":")).name for w in skipped) == [
        "nightly-0.bundle",
        "nightly-2.bundle",
    ]


def test_a_narrowed_rerun_is_never_the_last_green_and_history_leaves_it_out(tmp_path: Path) -> None:
    _run(tmp_path, "full", FAST)
    _run(tmp_path, "repro", FAST, "--case", "scenario-001")
    _run(tmp_path, "pr-8", FAST)
    gated = run_engine(
        "compare", "last-green", "pr-8", "--gate", "--json", *LOOSE, "--store", "st", cwd=tmp_path
    )
    assert gated.returncode == 0 and json.loads(gated.stdout)["baseline_run"] == "full"
    shown = run_engine("history", "fix-failing-test", "--json", "--store", "st", cwd=tmp_path)
    assert [p["run_id"] for p in json.loads(shown.stdout)] == ["full", "pr-8"]
    every = run_engine("history", "fix-failing-test", "--all", "--json", "--store", "st", cwd=tmp_path)
    points = {p["run_id"]: p for p in json.loads(every.stdout)}
    assert list(points) == ["full", "repro", "pr-8"]
    assert points["repro"]["narrowed_by"] == ["--case"] and not points["repro"]["green"]
    marked = run_engine("mark", "repro", "green", "--store", "st", cwd=tmp_path)
    assert marked.returncode == 0, marked.stderr.decode()
    again = run_engine("compare", "last-green", "pr-8", "--json", "--store", "st", cwd=tmp_path)
    assert json.loads(again.stdout)["baseline_run"] == "repro"  # a person's mark still counts
