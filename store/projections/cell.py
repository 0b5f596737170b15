"""One variant x case of a run's report state: its repeats' facts as bit masks, its score sums.

A state folded from events keeps its cells as columns (store.projections.cell_columns) and hands out
views that read and write them; a state decoded from a snapshot keeps these structs. Both read alike.
"""

from __future__ import annotations

import msgspec


class Cell(msgspec.Struct, array_like=True, gc=False):
    """One variant x case. A Struct, not a dataclass: kept as an array (its 13 field names were
    most of a report state's encoding, at every save: benchmarks/README.md#in-code-memory), and untracked by
    the cycle collector (ints and strings only: no cycle can form), so a state's hundreds of thousands of
    cells cost no collector passes and less memory each."""

    graded: int = 0  # bit r: repeat r graded (in the current grading round)
    passed: int = 0  # bit r: repeat r passed
    unscored: int = 0  # bit r: graded but no score (e.g. the judge's answer was unparseable)
    ungradable: int = 0  # bit r: unscored because a grader failed (not because a budget ran out)
    completed: int = 0  # bit r: the subject produced an output
    failed: int = 0  # bit r: the trial errored (infrastructure or model error)
    skipped: int = 0  # bit r: not run (pass_at_k early exit)
    score_sum: int = 0  # fixed point, over scored repeats
    # the lowest-numbered scored repeat and its score (fixed point): under pass_at_k with early exit
    # it is the one attempt whose running did not depend on the others' results
    first_repeat: int = -1
    first_score: int = 0
    cost: int = 0  # fixed point dollars spent on this case's trials (the cost gate resamples cases)
    # the lowest completed repeat's output hash; repeats that never vary hint at caching or temperature 0
    first_output: str = ""
    outputs_vary: bool = False
    # the largest input tokens of one of its trials: a budget reserves that for its next trial (in the
    # cell, not a dict of its own beside the cells: less per cell, in each state;
    # benchmarks/README.md#in-code-memory)
    tokens_in: int = 0

    def done(self) -> int:
        return self.graded | self.failed | self.skipped

    def scored(self) -> int:
        """Repeats graded with a score: the ones pass rates and verdicts count."""
        return self.graded & ~self.unscored
