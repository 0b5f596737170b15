"""Trials in bubblewrap sandboxes: the command line that isolates a process, its limits, its services."""
