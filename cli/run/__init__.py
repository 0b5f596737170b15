"""`engine run`, `replay` and `report`: the typer commands (commands), a run from the shell with its
progress and exit code (session), its stop on signals (stopping) and runs on a cron schedule (schedule)."""
