#!/usr/bin/env bash
# The readers' fuzz suite at full strength: 5,000 examples in all for the result readers (834 per reader, six
# readers: report, compare, export, fingerprint diff, status/follow, check --results), and as many per generator
# of the user's inputs (explicit YAML tags in recipes, cluster profiles and --set values; trace ids of any length
# and characters; big trace files, a twentieth of them). Every example must end in the reader's output or a
# one-line error. CI runs 60 per reader and generator.
#   benchmarks/fuzz_readers.sh [EXAMPLES_PER_READER]
set -euo pipefail
cd "$(dirname "$0")/.."
export HARNESS_FUZZ_EXAMPLES="${1:-834}"
exec .venv/bin/python -m pytest -q -p no:cacheprovider tests/unit/test_fuzz_readers.py tests/unit/test_fuzz_inputs.py
