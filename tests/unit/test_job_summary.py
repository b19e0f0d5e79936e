"""The CI job summary renders as Markdown: the workflow's own summary steps, run as bash on a copy of a sweep's
results (a stand-in `harness` prints preflight, status and eval-gate output; the report is built by this venv's
harness), then rendered with markdown-it (CommonMark + tables): command output sits in code blocks, tables render
as tables, every fence is closed and no image points at a file the summary cannot reach."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.report.render.job_summary import fence, main, section, without_local_images

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "agentic-sweep.yml"
PREFLIGHT = """preflight: FAIL: cluster_placeholder clusters/gb300.yaml:account: 'SITE' is a placeholder
PASS gpus                   recipes/x.yaml:parallelism: tp×pp fits the 4 GPUs of an array task
FAIL cluster_placeholder    clusters/gb300.yaml:account: 'SITE' is a placeholder: replace it with this site's value
WARN cpu_arch               clusters/gb300.yaml:cpu_arch: aarch64, not checked: cannot ask Slurm (sinfo: not found)
SKIP slurm_partition        clusters/gb300.yaml:partition: not checked: ```sinfo``` gave no answer
preflight: FAIL (1 failed of 4 checks)
"""
STATUS = """task  point  state      phase       slurm      exit  result / reason
0     c2     completed  collecting  COMPLETED  0     bmk_agentic_quickstart-sim_conc2.json
1     c4     completed  collecting  FAILED     3     bmk_agentic_quickstart-sim_conc4.json  (too_few_requests)
"""
FAKE_HARNESS = f"""#!/bin/bash
case "$1" in
  preflight) printf '%s' "$FAKE_PREFLIGHT"; exit 2 ;;
  status) printf '%s' "$FAKE_STATUS" ;;
  check) echo "PASS accuracy-eval  gsm8k 0.91 >= 0.85"; echo "PASS other" ;;
  *) exec {sys.executable} -m harness "$@" ;;
esac
"""


def _steps() -> dict[str, str]:
    wf = yaml.safe_load(WORKFLOW.read_text())
    return {s["name"]: s["run"] for s in wf["jobs"]["sweep"]["steps"] if "run" in s}


def _render(markdown: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(markdown)


def _fences_closed(markdown: str) -> bool:
    opened: str | None = None
    for line in markdown.splitlines():
        run = re.match(r"^(`{3,}|~{3,})", line)
        if run is None:
            continue
        if opened is None:
            opened = run.group(1)
        elif run.group(1).startswith(opened[0]) and len(run.group(1)) >= len(opened) and not line[len(
                run.group(1)):].strip():
            opened = None
    return opened is None


@pytest.fixture
def summary(tmp_path: Path) -> tuple[str, Path]:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for name, text in (("harness", FAKE_HARNESS), ("python", f'#!/bin/sh\nexec {sys.executable} "$@"\n')):
        (venv / "bin" / name).write_text(text)
        (venv / "bin" / name).chmod(0o755)
    out = tmp_path / "sweep"
    shutil.copytree(ROOT / "tests" / "fixtures" / "results" / "sim-run", out)
    path = tmp_path / "summary.md"
    env = {**os.environ, "HARNESS_VENV": str(venv), "SWEEP_OUT": str(out), "GITHUB_STEP_SUMMARY": str(path),
           "RECIPE": "recipes/x.yaml", "CLUSTER": "clusters/gb300.yaml", "HARNESS_PYTHON": sys.executable,
           "POINTS": "", "OVERRIDES": "", "JOB_ID": "42", "WAIVE_EVAL": "", "ARTIFACT": "agentic-sweep-gb300-7",
           "FAKE_PREFLIGHT": PREFLIGHT, "FAKE_STATUS": STATUS, "PYTHONPATH": str(ROOT)}
    steps = _steps()
    codes = []
    for name in ("Preflight (nothing is submitted when a check fails)", "Final states", "Accuracy eval gate",
                 "Report (curve table and verdicts in the job summary)"):
        proc = subprocess.run(["bash", "-c", steps[name]], env=env, capture_output=True, text=True, timeout=120,
                              cwd=tmp_path)
        codes.append(proc.returncode)
        assert proc.returncode in (0, 2), proc.stderr
    assert codes[0] == 2            # a failed preflight still fails its step
    return path.read_text(), out


def test_the_summary_renders_command_output_as_code_and_tables_as_tables(summary: tuple[str, Path]) -> None:
    text, out = summary
    assert _fences_closed(text)
    rendered = _render(text)
    blocks = re.findall(r"<pre><code[^>]*>(.*?)</code></pre>", rendered, re.S)
    preflight = next(b for b in blocks if "preflight: FAIL" in b)
    assert all(line.split()[0] in preflight for line in PREFLIGHT.splitlines())   # every line, in one block
    assert "SKIP slurm_partition" in preflight and "```sinfo```" in preflight     # backticks cannot close it
    assert any("c4     completed" in b for b in blocks)                             # the final states
    assert any("accuracy-eval" in b and "PASS other" not in b for b in blocks)
    assert "<h3>Preflight</h3>" in rendered and "<h3>Final states</h3>" in rendered
    assert "<table>" in rendered and re.search(r"<th[^>]*>conc</th>", rendered)    # the verdict table
    assert "<p>preflight" not in rendered and "<p>PASS" not in rendered              # no output as a paragraph


def test_the_summary_has_no_image_it_cannot_show_and_says_where_the_plots_are(summary: tuple[str, Path]) -> None:
    text, out = summary
    assert "![" not in text and "<img" not in _render(text)
    pngs = sorted(p.name for p in (out / "report").glob("*.png"))
    assert pngs
    note = next(line for line in text.splitlines() if line.startswith("The plots ("))
    assert all(f"`{name}`" in note for name in pngs)
    assert "`agentic-sweep-gb300-7` under `report/`" in note and str(out / "report") in note


def test_fence_outlasts_backticks_in_the_text() -> None:
    assert fence("a\n") == "```text\na\n```\n"
    assert fence("x ```` y").startswith("`````text\n") and fence("x ```` y").endswith("\n`````\n")
    assert section("T", "") == "\n### T\n\n```text\n(no output)\n```\n\n"


def test_only_local_images_are_taken_out() -> None:
    md = "# R\n\n## Plots\n\n![a.png](a.png)\n![b](plots/b.png)\n\nsee ![c](c.png) and ![r](https://x.io/r.png)\n"
    got = without_local_images(md, "art", None)
    assert "![r](https://x.io/r.png)" in got and "see `c.png` and" in got
    assert got.count("The plots (") == 1 and "`a.png`, `b.png`, `c.png`" in got and "`art`" in got
    assert "![a" not in got and "![b" not in got
    assert without_local_images("no images\n") == "no images\n"


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "r.md").write_text("# R\n\n![p](p.png)\n")
    assert main(["report", str(tmp_path / "r.md"), "--where", "/x/report"]) == 0
    assert capsys.readouterr().out == "# R\n\nThe plots (`p.png`) are files a job summary cannot show: they are on " \
                                      "the runner in `/x/report`, with `report.html`, which shows them.\n"
    (tmp_path / "o.txt").write_text("PASS x\n")
    assert main(["fence", "Preflight", str(tmp_path / "o.txt")]) == 0
    assert capsys.readouterr().out == "\n### Preflight\n\n```text\nPASS x\n```\n\n"
