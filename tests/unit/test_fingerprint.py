"""Fingerprints: secrets redacted, keys sorted, diffs leaf by leaf."""

import json

from harness.point.fingerprint import build_fingerprint
from harness.point.fingerprint_diff import diff
from harness.redact import redact_argv, redact_env


def test_redaction():
    assert redact_env({"HF_TOKEN": "x", "AWS_SECRET_ACCESS_KEY": "y", "DB_PASSWORD": "z", "SGLANG_X": "1"}) == {
        "AWS_SECRET_ACCESS_KEY": "<redacted>", "DB_PASSWORD": "<redacted>", "HF_TOKEN": "<redacted>",
        "SGLANG_X": "1"}
    assert redact_argv(["-e", "HF_TOKEN=abc", "-e", "A=1"]) == ["-e", "HF_TOKEN=<redacted>", "-e", "A=1"]


def test_keys_are_in_deterministic_order():
    fp = build_fingerprint(host={"z": 1, "a": {"y": 2, "b": 3}}, server={"version": "0.5.23"}, image="img",
                           image_digest=None, engine="sim", server_argv=["python3"],
                           server_env={"SGLANG_BUILD_COMMIT": "c1c287a4", "HF_TOKEN": "s"}, launcher="local")
    text = json.dumps(fp)
    assert text == json.dumps(json.loads(text), sort_keys=True)
    assert fp["image"]["env"] == {"SGLANG_BUILD_COMMIT": "c1c287a4"}
    assert fp["server"]["env"]["HF_TOKEN"] == "<redacted>"


def test_diff_lists_changed_added_and_removed_leaves():
    a = {"server": {"argv": ["a"], "version": "0.5.20"}, "gone": 1}
    b = {"server": {"argv": ["a"], "version": "0.5.23"}, "new": {"x": 2}}
    assert diff(a, b) == ['gone: 1 -> (absent)', 'new: (absent) -> {"x": 2}', 'server.version: "0.5.20" -> "0.5.23"']
    assert diff(a, a) == []
