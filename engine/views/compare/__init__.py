"""`engine compare`: a candidate run against a base run, metric by metric, with gates."""
