"""Kept projections (a fast path beside replay): snapshots of folded state, derived records, digests."""
