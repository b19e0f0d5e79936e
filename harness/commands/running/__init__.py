"""Subcommands that run points and follow them: sweep, run, run-point, eval, submit, status, follow, logs, cancel, and the simulator and power sampler they use."""
