"""Autonomous tuning sessions: one parameter changed per variation, accepted only on real improvement."""
