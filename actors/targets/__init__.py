"""Targets: what a trial calls (an HTTP model server, a subprocess, a Python callable, the local model)."""
