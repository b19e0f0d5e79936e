#!/usr/bin/env bash
# The result readers' fuzz suite at full strength: 5,000 examples in all (834 per reader, six readers:
# report, compare, export, fingerprint diff, status/follow, check --results). Every example must end in the
# reader's output or a one-line error, within 2 s (hypothesis's deadline). CI runs 60 per reader.
#   benchmarks/fuzz_readers.sh [EXAMPLES_PER_READER]
set -euo pipefail
cd "$(dirname "$0")/.."
export HARNESS_FUZZ_EXAMPLES="${1:-834}"
exec .venv/bin/python -m pytest -q -p no:cacheprovider tests/unit/test_fuzz_readers.py
