"""Real fingerprint captures for tests: the capture script run by an interpreter through the local launcher,
written as the point runner writes `fingerprint_agg_w0.json` and read back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.point.fingerprints.fingerprint import build_fingerprint, capture_in_server_env
from launchers import LaunchContext, get_launcher


def capture(tmp: Path, name: str, python: str, image: str) -> dict[str, Any]:
    """A real capture by `python` (standing for an SGLang server's interpreter), as the point runner writes it."""
    pdir = tmp / name
    pdir.mkdir()
    argv = [python, "-m", "sglang.launch_server", "--model-path", "m", "--port", "30000"]
    ctx = LaunchContext(point_dir=pdir, image=image, engine="sglang", container_name=f"harness-{name}")
    launcher = get_launcher("local")
    captured, record = capture_in_server_env(launcher, argv, {"SGLANG_ENABLE_X": "1"}, ctx)
    assert captured is not None, record
    fp = build_fingerprint(captured=captured, capture=record, server={"version": "n/a"}, image=image,
                           digest={"digest": None, "digest_reason": "local"}, engine="sglang",
                           server_argv=launcher.render(argv, {}, ctx), server_env={"SGLANG_ENABLE_X": "1"},
                           launcher="local")
    path = pdir / "fingerprint_agg_w0.json"
    path.write_text(json.dumps(fp, indent=2) + "\n")
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded
