"""The event log itself: the LMDB environment, appends, reads, file checks before mapping, `engine check`."""
