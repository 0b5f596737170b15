"""Views: read the log and answer (queries, reports, compare, history, export, promote), writing no
events."""
