"""Accuracy evals of a served recipe: lm-eval GSM8K (shipped offline) on a fresh server, thresholds,
InferenceX eval rows and the gate (`harness eval`, `sweep --with-eval`, `check`)."""
