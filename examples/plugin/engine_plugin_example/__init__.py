"""An example engine plugin: each kind is one module holding its spec, its implementation and its
declaration (see pyproject.toml for the entry points that register them)."""
