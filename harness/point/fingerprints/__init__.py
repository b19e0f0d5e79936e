"""Fingerprints: what actually ran on each worker.

`fingerprint_capture` is the probe script run in the server's own environment, `fingerprint` runs it and
writes the point's `fingerprint.json`, `fingerprint_diff` compares two fingerprints.
"""
