"""The end of a failed server's log, as the console shows it, and the simulator rehearsal it suggests."""

from __future__ import annotations

from pathlib import Path

from harness.commands.running.rehearsal import rehearsal_command
from harness.point.outcome_text import describe_outcome
from harness.point.run import PointOutcome
from harness.point.servers.server_failure import engine_missing, explaining_lines, failure_excerpt, key_line
from harness.recipe.load import load_recipe

ROOT = Path(__file__).resolve().parents[2]
GPU_RECIPE = "recipes/musespark-fp4-h200-sglang-agentic-dflash.yaml"

TRACEBACK = """\
[2026-12-04 10:00:01] server_args=ServerArgs(model_path='x')
[2026-12-04 10:00:02] INFO:     127.0.0.1:5 - "GET /health HTTP/1.1" 503
Traceback (most recent call last):
  File "/usr/lib/python3/runpy.py", line 198, in _run_module_as_main
    return _run_code(code, main_globals, None,
  File "/sgl/launch_server.py", line 11, in <module>
    launch_server(server_args)
RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB
[harness] the harness stopped the server when the point ended (SIGTERM to its process group; exit status 1)
"""


def test_the_exception_line_explains_a_traceback() -> None:
    assert explaining_lines(TRACEBACK) == ["RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"]
    assert engine_missing(TRACEBACK) is None


def test_without_an_error_line_the_last_lines_explain() -> None:
    assert explaining_lines("loading weights 10%\nloading weights 20%\n\n") == ["loading weights 10%",
                                                                              "loading weights 20%"]


def test_a_missing_engine_is_named_in_the_logs_words() -> None:
    log = "/usr/bin/python3: Error while finding module specification for 'sglang.launch_server' " \
          "(ModuleNotFoundError: No module named 'sglang')\n"
    assert engine_missing(log) == "SGLang is not installed where the server runs (No module named 'sglang')"
    assert engine_missing("RuntimeError: No CUDA GPUs are available\n") == \
        "no usable GPU is visible here (No CUDA GPUs are available)"
    assert engine_missing("Unable to find image 'lmsysorg/sglang:v1' locally\n") == \
        "the engine's image is not available here (Unable to find image 'lmsysorg/sglang:v1' locally)"


def test_the_excerpt_follows_the_reason(tmp_path: Path) -> None:
    (tmp_path / "server.log").write_text(TRACEBACK)
    (tmp_path / "server_decode_w0.log").write_text("ImportError: No module named 'sgl_kernel'\n")
    assert key_line(tmp_path / "server.log") == "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"
    assert failure_excerpt(tmp_path, "client_failed: x") is None
    one = failure_excerpt(tmp_path, "server_exited: server exited with status 1 before it was ready")
    assert one is not None and one.path == tmp_path / "server.log" and one.engine_missing is None
    member = failure_excerpt(tmp_path, "server_exited: decode_w0 exited with status 1 before the deployment was "
                                       "ready; server_decode_w0.log: ImportError")
    assert member is not None and member.path == tmp_path / "server_decode_w0.log"
    assert member.engine_missing == "SGLang is not installed where the server runs (No module named 'sgl_kernel')"


def test_the_console_prints_the_log_and_the_rehearsal(tmp_path: Path) -> None:
    (tmp_path / "server.log").write_text("ModuleNotFoundError: No module named 'sglang'\n")
    outcome = PointOutcome("failed", "server_exited: server exited with status 1 before it was ready", 1, tmp_path,
                           None, None)
    assert describe_outcome(outcome, "harness run R --point c1 --set engine=sim").splitlines()[1:] == [
        f"  server.log ({tmp_path / 'server.log'}) ends with:",
        "    ModuleNotFoundError: No module named 'sglang'",
        "  this machine cannot start the engine: SGLang is not installed where the server runs (No module named "
        "'sglang')",
        "  rehearse it on the simulator instead (no GPU; results labelled SIMULATED, unofficial): harness run R "
        "--point c1 --set engine=sim",
    ]
    (tmp_path / "server.log").write_text(TRACEBACK)
    assert "rehearse" not in describe_outcome(outcome, "harness run R")


def test_the_rehearsal_swaps_the_engine_the_pinned_corpus_and_the_window(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    recipe = load_recipe(GPU_RECIPE)
    assert rehearsal_command("run", GPU_RECIPE, recipe, ["engine=sglang", "args.x=1"], ["c4"]) == (
        f"harness run {GPU_RECIPE} --point c4 --set args.x=1 --set engine=sim --set client.traces=traces/quickstart "
        "--duration 20 --unofficial")
    assert rehearsal_command("sweep", GPU_RECIPE, recipe, [], ["c1", "c2"]) == (
        f"harness sweep {GPU_RECIPE} --points c1 c2 --set engine=sim --set client.traces=traces/quickstart "
        "--duration 20 --unofficial")
