"""The words every command prints for throughput: tokens per second per GPU, of all tokens (input + output,
InferenceX's `total_tput`), of output tokens or of input tokens. `predict`, `run`, `sweep`, `report`, `compare` and
`search` take their column titles and labels from here, so one figure reads the same wherever it is printed."""

from __future__ import annotations

TOTAL_PER_GPU = "total tok/s/GPU"
OUTPUT_PER_GPU = "out tok/s/GPU"
INPUT_PER_GPU = "in tok/s/GPU"
THROUGHPUT_TERMS = (TOTAL_PER_GPU, OUTPUT_PER_GPU, INPUT_PER_GPU)
