"""The host-wide list (tests/conftest.py) names tests that exist: a renamed module or test would drop out of the
host-wide unit and its lock without a word."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import HOST_WIDE

ROOT = Path(__file__).resolve().parents[2]


def test_every_host_wide_prefix_names_an_existing_module_or_test() -> None:
    for prefix in HOST_WIDE:
        path, _, test = prefix.partition("::")
        assert (ROOT / path).exists(), prefix
        if test:
            assert f"def {test}" in (ROOT / path).read_text(), prefix
