"""Analyse: curves, frontiers and verdicts computed from the loaded results.

`curves` and `table` build each configuration's curve and its plain-text table, `pareto` the frontier,
`noise` and `spread` the run-to-run variation, `achieved` what the client achieved against what it asked,
`verdicts` each point's verdict line, and `compare` old → new between two runs.
"""
