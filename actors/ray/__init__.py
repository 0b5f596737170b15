"""The Ray backend: trials as tasks on a cluster, in batches, over a compact wire format."""
