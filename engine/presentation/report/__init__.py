"""The report as plain text pieces every surface shares: status lines, tables, numbers, stopping."""
