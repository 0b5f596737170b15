"""Views: read the log and answer (queries, reports, compare, history, export, promote); they write no events."""
