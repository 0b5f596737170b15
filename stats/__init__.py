"""Statistics: tests, intervals, gates, racing and sequential rules. Pure functions over numbers and
the vocabulary (engine.events), no I/O: importable without LMDB, Trio or the store."""
