"""Grading rounds in the web view: the run page, the matrix and the matrix API show the round asked
for (`?grading=N`), not only the latest; the run and matrix pages list every round to choose from."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import SAFETY_S, run_engine
from tests.serve_helpers import make_store, serving


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = make_store(tmp_path_factory.mktemp("rounds"))
    (store.parent / "strict.toml").write_text('[[graders]]\nkind = "regex"\npattern = "^never this$"\n')
    regraded = run_engine("regrade", "r1", "--graders", "strict.toml", "--name", "strict", "--store", "st",
                          cwd=store.parent)  # fmt: skip
    assert regraded.returncode in (0, 1), regraded.stderr.decode()
    with serving(store) as url:
        yield url


def passes(base_url: str, **params: str) -> int:
    found = httpx.get(f"{base_url}/api/runs/r1/matrix", params=params, timeout=SAFETY_S).json()
    return sum(cell["passes"] for row in found["rows"] for cell in row["cells"].values())


def test_the_matrix_api_answers_for_an_earlier_round(base_url: str) -> None:
    assert passes(base_url) == passes(base_url, grading="1") == 0  # the strict round passes nothing
    assert passes(base_url, grading="0") > 0  # the original round's passes are still there


def test_pages_list_the_rounds_and_show_the_one_asked_for(base_url: str) -> None:
    for path in ("/runs/r1", "/runs/r1/matrix"):
        latest = httpx.get(base_url + path, timeout=SAFETY_S).text
        assert "grading round 1 (strict)" in latest and '<option value="0">0 (original)</option>' in latest
        earlier = httpx.get(base_url + path, params={"grading": "0"}, timeout=SAFETY_S).text
        assert "grading round 0 (original)" in earlier and '<option value="0" selected>' in earlier
    assert httpx.get(f"{base_url}/runs/r1", params={"grading": "x"}, timeout=SAFETY_S).status_code == 400
