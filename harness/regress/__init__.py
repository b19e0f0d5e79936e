"""The regression gate: a baseline and a candidate (run directories or store selections) compared per config, point
and metric, with intervals from compare's noise model, a tolerance and a correction for the family of comparisons.
`harness.report.analysis.confidence` holds the arithmetic (Student-t, Welch, Holm, Benjamini-Hochberg); `gate` the
pairing and the calls, `changes` what differs between the sides, `render` the terminal and Markdown text."""
