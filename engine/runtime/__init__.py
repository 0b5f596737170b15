"""Runtime: a run's lifetime (runner, working actors, write pipeline, plans, tuning sessions, schedule)."""
