"""The compare page's side-by-side outputs: for the cases whose verdict changed, then for others whose
output changed, the base run's and the candidate's first outputs with a word-level diff; and within a
case (the trial page), each variant's first output against the baseline's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.presentation.diff import WordDiff, word_diff

MAX_DIFFS = 20


@dataclass(frozen=True, slots=True)
class DiffItem:
    case: str
    variant: str
    change: str  # "pass → fail", or "" (the verdict held, the output changed)
    diff: WordDiff
    href: str


First = Mapping[tuple[str, str], Any]  # (variant, case) -> its first output: has .output_hash


Changes = dict[str, list[dict[str, str]]]  # the comparison's verdict_changes


def _pairs(base: First, cand: First, changes: Changes, rename: dict[str, str]) -> list[tuple[str, str, str]]:
    """(variant, case, change) to show: the verdict changes, then cells whose first output differs."""
    out = [(c["variant"], c["case"], f"{c['base']} → {c['cand']}") for key in ("failing", "passing")
           for c in changes[key]]  # fmt: skip
    seen = {(v, c) for v, c, _ in out}
    for (variant, case), after in cand.items():
        before = base.get((rename.get(variant, variant), case))
        if (variant, case) not in seen and before is not None and before.output_hash != after.output_hash:
            out.append((variant, case, ""))
        if len(out) >= MAX_DIFFS:
            break
    return out[:MAX_DIFFS]


def _renames(base: First, cand: First) -> dict[str, str]:
    """Variants are matched by name; two single-variant runs are matched whatever their names."""
    names, cand_names = {v for v, _ in base}, {v for v, _ in cand}
    if names & cand_names or len(names) != 1 or len(cand_names) != 1:
        return {}
    return {next(iter(cand_names)): next(iter(names))}


ByVariant = Mapping[str, list[dict[str, Any]]]  # a case's described trials (the trials API's), by variant


def baseline_diffs(by_variant: ByVariant, baseline: str | None) -> list[tuple[str, WordDiff]]:
    """(variant, diff against the baseline) for every other variant of the case, first repeats: none
    when the baseline has no finished trial of it."""
    if baseline is None or baseline not in by_variant:
        return []
    base = by_variant[baseline][0].get("output") or ""
    return [(name, word_diff(base, trials[0].get("output") or ""))
            for name, trials in by_variant.items() if name != baseline and trials]  # fmt: skip
