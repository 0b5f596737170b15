"""A big report's blob made from its JSON in pieces is the blob of its JSON made whole: the pieces are
`to_json(report)`'s bytes, and hashing and compressing them as they come gives `pack_blob`'s bytes."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.api import spec_from_dict
from engine.events import kinds as k
from engine.events.codec import to_json
from engine.events.report import RunReport
from engine.runtime import report_blob as blob_module
from engine.store.blobs import pack_blob, pack_pieces, unpack_blob
from engine.store.projections.report_builder import build_report
from engine.store.projections.run_state import RUN_STATE, RunState

NAMES = st.text(st.sampled_from(list("ab\"\\é→ -_.\u2028\t")), min_size=1, max_size=8).filter(str.strip)


def _report(case_ids: list[str], repeats: int, passes: list[bool]) -> RunReport:
    spec = spec_from_dict({
        "name": "pieces", "target": {"kind": "python", "callable": "m:f"},
        "variants": [{"name": "a"}, {"name": 'b "quoted"'}],
        "cases": [{"id": case, "prompt": "q", "expected": "x"} for case in case_ids],
        "graders": [{"kind": "contains"}], "repeat": {"count": repeats},
    })  # fmt: skip
    state, fold = RunState("r"), RUN_STATE.evolve
    fold(state, k.ExperimentDefined(run_id="r", ts=1.0, spec=spec, spec_hash="h", source="x.toml"))
    fold(state, k.RunStarted(run_id="r", ts=1.0, experiment="pieces", trials_total=0))
    for index, variant_spec in enumerate(spec.variants):
        fold(state, k.VariantProposed(run_id="r", ts=1.0, variant=variant_spec, index=index))
    at = 0
    for repeat in range(repeats):
        for case in case_ids:
            for variant in ("a", 'b "quoted"'):
                passed, at = passes[at % len(passes)], at + 1
                out = "same" if passed else f"o{at}"
                fold(state, k.TrialCompleted(run_id="r", ts=1.0, variant=variant, case=case, repeat=repeat,
                                             output_hash=out, latency_ms=1.0))  # fmt: skip
                fold(state, k.TrialGraded(run_id="r", ts=1.0, variant=variant, case=case, repeat=repeat,
                                          score=float(passed), passed=passed))  # fmt: skip
    return build_report(state)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(NAMES, min_size=1, max_size=12, unique=True),
    st.integers(2, 3),
    st.lists(st.booleans(), min_size=1, max_size=7),
    st.integers(1, 5),
)
def test_the_pieces_are_the_whole_json_and_the_blob_is_pack_blobs(
    case_ids: list[str], repeats: int, passes: list[bool], chunk: int
) -> None:
    report = _report(case_ids, repeats, passes)
    whole = to_json(report)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(blob_module, "CHUNK", chunk)
        names = [name for name in blob_module.LONG if getattr(report, name)]
        assert "scenarios" in names  # a verdict per cell, from two repeats on
        pieces = list(blob_module.json_pieces(report, names))
        assert b"".join(pieces) == whole and len(pieces) >= 1 + 2 * len(names)
        assert blob_module.report_blob(report) == pack_blob(whole)
    assert unpack_blob(pack_blob(whole)[1]) == whole


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=20_000), st.lists(st.integers(0, 20_000), max_size=12), st.booleans())
def test_pieces_hashed_and_compressed_as_they_come_are_pack_blobs(
    data: bytes, cuts: list[int], noise: bool
) -> None:
    data = data + os.urandom(6_000) if noise else data * 3  # incompressible, or compressible
    bounds = [0, *sorted(min(c, len(data)) for c in cuts), len(data)]
    pieces = [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    assert pack_pieces(lambda: iter(pieces)) == pack_blob(data)
