"""How reports and runs are shown: one typed report (engine.events.report.RunReport), one list of its
sections, and one registry of formats; the terminal, Markdown, the HTML file and the web pages all
render through here (Jinja2 templates, autoescaped, for HTML)."""
