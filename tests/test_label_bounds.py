"""Labels with bounds: a label file of any shape (deep nesting, huge rows, broken CSV, fuzzed bytes)
gives one InputError line and no traceback; notes are capped; the web view's label route refuses a
write from another site (Origin, Sec-Fetch-Site) and an oversized body."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import InputError
from engine.input.labels_file import read_label_rows
from engine.runtime.label_record import NOTE_MAX
from tests.conftest import run_engine
from tests.label_runs import judged_run
from tests.serve_helpers import serving

TOKEN = "label-token-0123456789"
LABEL = {"case": "c3", "variant": "baseline", "repeat": 1, "verdict": "fail", "note": "wrong"}


def one_line_refusal(done: object) -> str:
    err = done.stderr.decode()  # type: ignore[attr-defined]
    assert done.returncode == 2 and len(err.strip().splitlines()) == 1, err  # type: ignore[attr-defined]
    assert "Traceback" not in err
    return err


async def test_hostile_label_files_are_one_line_each(tmp_path: Path) -> None:
    await judged_run(tmp_path / "st")
    files = {
        "deep.jsonl": "[" * 100_000 + "\n",
        "nested-field.jsonl": json.dumps({**LABEL, "note": [[[["x"]]]]}) + "\n",
        "long-note.jsonl": json.dumps({**LABEL, "note": "n" * 5_000_000}) + "\n",
        "capped-note.jsonl": json.dumps({**LABEL, "note": "n" * (NOTE_MAX + 1)}) + "\n",
        "huge-cell.csv": "case,variant,repeat,verdict,note\nc3,baseline,1,fail," + "x" * 200_000 + "\n",
        "extra-cells.csv": "case,variant,repeat,verdict\nc3,baseline,1,fail,surprise\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        done = run_engine("label", "lab", "--from", name, "--store", "st", cwd=tmp_path)
        err = one_line_refusal(done)
        assert name in err, err
    done = run_engine("report", "lab", "--json", "--store", "st", cwd=tmp_path)
    assert json.loads(done.stdout)["label_agreement"] is None  # nothing was recorded


LINES = st.one_of(
    st.text(max_size=200),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                 lambda inner: st.lists(inner, max_size=3)
                 | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                 max_leaves=12).map(json.dumps),
    st.builds(lambda row: json.dumps(row), st.fixed_dictionaries(
        {"case": st.text(max_size=5), "variant": st.text(max_size=5)},
        optional={"repeat": st.one_of(st.integers(), st.floats(), st.text(max_size=3)),
                  "verdict": st.text(max_size=5), "score": st.one_of(st.floats(), st.text(max_size=3))})),
)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(LINES, max_size=5), suffix=st.sampled_from([".jsonl", ".csv"]))
def test_any_label_file_reads_or_says_why_in_one_input_error(
    tmp_path: Path, lines: list[str], suffix: str
) -> None:
    path = tmp_path / f"labels{suffix}"
    path.write_text("\n".join(lines))
    try:
        rows = read_label_rows(path)
    except InputError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc).strip()
        return
    assert all(row.repeat >= 1 for _, row in rows)


async def test_the_label_route_refuses_other_sites_and_big_bodies(tmp_path: Path) -> None:
    await judged_run(tmp_path / "st")
    secret = {"Authorization": f"Bearer {TOKEN}"}
    with serving(tmp_path / "st", "--token", TOKEN) as url:
        api = f"{url}/api/runs/lab/labels"
        for foreign in ({"Origin": "https://evil.example"}, {"Origin": "null"},
                        {"Origin": f"{url}.evil.example"}, {"Sec-Fetch-Site": "cross-site"}):  # fmt: skip
            refused = httpx.post(api, json=LABEL, headers={**secret, **foreign})
            assert refused.status_code == 403 and "another site" in refused.json()["error"], foreign
        big = httpx.post(api, json={**LABEL, "note": "n" * 20_000}, headers=secret)
        assert big.status_code == 413
        long_note = httpx.post(api, json={**LABEL, "note": "n" * (NOTE_MAX + 1)}, headers=secret)
        assert long_note.status_code == 400 and "note" in long_note.json()["error"]
        same = httpx.post(api, json=LABEL, headers={**secret, "Origin": url, "Sec-Fetch-Site": "same-origin"})
        assert same.status_code == 200, same.text
