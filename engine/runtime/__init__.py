"""Runtime: a run's lifetime (runner, working actors, write pipeline, plans, tuning sessions, schedule),
and the commands that act on a stored run: cancel, regrade, label rounds, labels, marks, judge audits."""
