"""Durable state: the LMDB event log, the blob store and projections (pure folds)."""
