"""A big run's page stays small: the flaky cases shown are the first few, and a link pages through
the rest in the matrix (its flaky filter), so a run with thousands of flaky cases is not a page
thousands of rows tall."""

from __future__ import annotations

import msgspec

from engine.events.report import FlakyCase
from engine.presentation.report.tables import MAX_FLAKY_ROWS
from engine.web.run_page import run_html
from tests.test_report_structure import LIVE, full_report


def test_many_flaky_cases_show_the_first_and_link_to_the_matrix_pages() -> None:
    flaky = [FlakyCase("hot-variant", f"case-{i:05d}", 1, 3) for i in range(2_500)]
    page = run_html(msgspec.structs.replace(full_report(), flaky_cases=flaky), LIVE, "/root")
    assert f"case-{MAX_FLAKY_ROWS - 1:05d}" in page and f"case-{MAX_FLAKY_ROWS:05d}" not in page
    assert 'href="/root/runs/' in page and "/matrix?show=flaky" in page
    assert len(page.encode()) < 100_000  # 2,500 flaky rows would be ~200 KB on their own


def test_a_few_flaky_cases_need_no_link() -> None:
    assert "show=flaky" not in run_html(full_report(), LIVE, "")
