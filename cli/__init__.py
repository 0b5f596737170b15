"""The `engine` command line: typer commands that parse, call the engine and render."""
