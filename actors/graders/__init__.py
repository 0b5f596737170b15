"""Graders turn one trial's output into a score in [0, 1] and a pass/fail."""
