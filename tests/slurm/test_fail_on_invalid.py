"""`--fail-on-invalid` on the real local Slurm: one quickstart point with a 5 s window completes with too few
requests (invalid; the requests in flight at the cutoff finish within the grace period, so AIPerf has records to
summarize even on a loaded machine); `submit --wait --fail-on-invalid` and `follow --fail-on-invalid` exit 3,
`follow` without it exits 0, as an exploratory sweep does."""

from __future__ import annotations

from pathlib import Path

from tests.slurm.conftest import LOCAL_CI, QUICKSTART, harness

SHORT = ("--set", "client.warmup_requests_per_lane=1", "--set", "client.burst_phase_starts=true", "--duration", "5")


def test_an_invalid_point_fails_the_sweep_only_with_the_flag(slurm: None, harness_env: dict[str, str],
                                                             tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = harness(harness_env, "submit", str(QUICKSTART), "--cluster", str(LOCAL_CI), "--out", str(out),
                   "--points", "c2", *SHORT, "--wait", "--fail-on-invalid", "--interval", "1", timeout=300)
    assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "too_few_completed" in proc.stdout
    job = proc.stdout.splitlines()[0].strip()
    assert harness(harness_env, "follow", job, "--out", str(out), "--interval", "1").returncode == 0
    assert harness(harness_env, "follow", job, "--out", str(out), "--interval", "1",
                   "--fail-on-invalid").returncode == 3
