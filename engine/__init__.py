"""engine: run A/B/n experiments on LLM apps and agents, event-sourced on LMDB.

The embedding API lives in `engine.api`; import from there (kept lazy so that
`engine --help` stays fast).
"""
