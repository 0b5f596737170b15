"""Input: experiment files and other tools' shapes in, a checked ExperimentSpec out (loading,
compatibility shapes, suites, prompt overrides, validation, narrowing, environment preflight)."""
