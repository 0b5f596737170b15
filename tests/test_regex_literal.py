"""The run of characters a regex search filters by: every text a case-insensitive (or exact) match is
found in holds it, lowered as the kept outputs are, so the filtered search finds what trying the
expression on every text finds."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from engine.store.trial_index.regex_literal import required_literal

# letters `re` folds with others (ı, ſ, the Kelvin sign, dotted İ), final sigma, ß, caseless CJK
TRICKY = "aAiIıİsSſkKKσςΣßẞ東京タ.-4 \n\x00"
LITERAL = st.text(alphabet=TRICKY, min_size=1, max_size=6)


@st.composite
def patterns(draw: st.DrawFn) -> str:
    other = st.sampled_from([".*", "^", "$", r"\b", "(x|y)?"])
    parts = draw(st.lists(st.one_of(LITERAL.map(re.escape), other), min_size=1, max_size=4))
    return "".join(parts)


@given(patterns(), st.text(alphabet=TRICKY, max_size=20), st.booleans())
@example("SSK", "ſſk", True)
@example("ΣΟΦ", "σοφ", True)
@example("東京", "ab東京", True)
def test_a_match_holds_the_literal(source: str, text: str, ignore_case: bool) -> None:
    pattern = re.compile(source, re.IGNORECASE if ignore_case else 0)
    literal = required_literal(pattern)
    if literal is not None and pattern.search(text) is not None:
        assert literal in text.lower().encode("utf-8", "surrogatepass")


@pytest.mark.parametrize(
    ("source", "expected"),
    [("東京.*ΣΟΦ", "東京"), ("PARIS\\?", "par"), ("error 4\\d", "error 4"), ("(?x) c a p", "cap"),
     ("a|bcd", None), ("x*", None), ("[abc]+", None), ("sik", None), ("ab\x00cd", None)],
)  # fmt: skip
def test_the_literal_of_an_expression(source: str, expected: str | None) -> None:
    found = required_literal(re.compile(source, re.IGNORECASE))
    assert found == (None if expected is None else expected.encode())
