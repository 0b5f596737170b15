"""`engine import`, `export`, `check`, `backup` and `rebuild`: the typer commands (commands), runs read
from bundle files (bundles) and the store's care (care)."""
