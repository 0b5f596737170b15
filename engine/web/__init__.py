"""The web view: a live, read-only projection of the log as pages and a JSON API (`engine serve`)."""

from engine.web.app import serve_app

__all__ = ["serve_app"]
