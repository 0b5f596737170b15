"""Pure folds over the log: run state and report."""
