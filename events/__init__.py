"""The vocabulary: experiment spec, events, report. msgspec Structs only, no I/O."""
