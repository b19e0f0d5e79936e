"""Subcommands that read a run's results: report, compare, export, fingerprint."""
