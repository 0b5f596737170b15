"""Declared variants and matrices."""

from __future__ import annotations

import pytest

from engine.actors.variants import expand_variants
from engine.api import spec_from_dict
from engine.errors import InputError

CASES = [{"id": "c", "prompt": "p", "expected": "x"}]


def test_no_variants_means_one_baseline() -> None:
    assert [v.name for v in expand_variants(spec_from_dict({"name": "n", "cases": CASES}))] == ["baseline"]


def test_cartesian_matrix_after_declared_variants() -> None:
    spec = spec_from_dict(
        {
            "name": "n",
            "cases": CASES,
            "variants": [{"name": "control"}],
            "matrix": {"model": ["a", "b"], "temperature": [0.2, 0.7]},
        }
    )
    variants = expand_variants(spec)
    assert [v.name for v in variants] == [
        "control",
        "model=a,temperature=0.2",
        "model=a,temperature=0.7",
        "model=b,temperature=0.2",
        "model=b,temperature=0.7",
    ]
    assert variants[1].model == "a" and variants[1].params == {"temperature": 0.2}


def test_explicit_matrix_entries_with_names_and_flags() -> None:
    spec = spec_from_dict(
        {
            "name": "n",
            "cases": CASES,
            "matrix": [
                {"name": "terse", "system": "Be terse.", "flags.tool_policy": "conservative"},
                {"name": "verbose", "system": "Explain.", "max_tokens": 512},
            ],
        }
    )
    terse, verbose = expand_variants(spec)
    assert terse.system == "Be terse." and terse.flags == {"tool_policy": "conservative"}
    assert verbose.params == {"max_tokens": 512}


def test_duplicate_matrix_names_are_refused() -> None:
    with pytest.raises(InputError, match="matrix"):
        spec_from_dict({"name": "n", "cases": CASES, "matrix": [{"name": "a"}, {"name": "a"}]})
