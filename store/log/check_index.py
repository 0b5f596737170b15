"""The run index as `engine check` holds it while it scans the events: two arrays by sequence number.

Sequence numbers are dense (1..N), so each row is a slot: the run and the tag as small numbers into
lists of the distinct names (a few hundred runs, a few dozen tags). A dict of (run, tag) tuples held
~250 bytes an event (866 MiB anonymous on a 1M-trial store); this holds 8.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator


class RowsBySeq:
    def __init__(self, last: int) -> None:
        self.names: list[str] = [""]  # 0: no row in that slot
        self.tags: list[str] = [""]
        self._name_ids: dict[str, int] = {}
        self._tag_ids: dict[str, int] = {}
        self._run = array("I", bytes(4 * (last + 1)))
        self._tag = array("I", bytes(4 * (last + 1)))
        self._stray: dict[int, tuple[str, str]] = {}  # rows naming a seq past the last event

    def listed(self, seq: int) -> str | None:
        """The run whose row lists `seq`, if any."""
        if 0 <= seq < len(self._run):
            return self.names[self._run[seq]] if self._run[seq] else None
        return self._stray[seq][0] if seq in self._stray else None

    def add(self, seq: int, run: str, tag: str) -> None:
        if not 0 <= seq < len(self._run):
            self._stray[seq] = (run, tag)
            return
        self._run[seq] = _id_of(run, self.names, self._name_ids)
        self._tag[seq] = _id_of(tag, self.tags, self._tag_ids)

    def pop(self, seq: int) -> tuple[str | None, str | None]:
        if not 0 <= seq < len(self._run):
            return self._stray.pop(seq, (None, None))
        run, tag = self._run[seq], self._tag[seq]
        if not run:
            return None, None
        self._run[seq] = self._tag[seq] = 0
        return self.names[run], self.tags[tag]

    def remaining(self) -> Iterator[tuple[int, str, str]]:
        """The rows not popped, by sequence number."""
        strays = sorted(self._stray.items())
        yield from ((seq, run, tag) for seq, (run, tag) in strays if seq < 0)
        for seq, run in enumerate(self._run):
            if run:
                yield seq, self.names[run], self.tags[self._tag[seq]]
        yield from ((seq, run, tag) for seq, (run, tag) in strays if seq >= 0)


def _id_of(name: str, names: list[str], ids: dict[str, int]) -> int:
    found = ids.get(name)
    if found is None:
        found = ids[name] = len(names)
        names.append(name)
    return found
