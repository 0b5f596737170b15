"""The kept trial index (a fast path beside the trials fold): per-run chunks of trial rows, search, tables."""
