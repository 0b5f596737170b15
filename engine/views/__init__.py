"""Views: read the log and answer (queries, reports, compare, export, promote) or grade it again."""
