"""`engine compare`, `history` and `mark`: the typer commands (commands), the gate's baseline and its
printing (gate), and the metric over runs (history)."""
