"""Subcommands that read recipes before anything runs: plan, diff, check, preflight and their inputs."""
