"""The tool scripts (tools/*.sh, tests/gpu/*.sh) stop what they start in the background, pass or fail: each such
start is registered with tools/background.sh, whose `stop_background` the script's EXIT trap runs. The helper is
run here for real, on long-lived children that stand in for the simulator: a process group with a grandchild, a
process that ignores SIGTERM, and a script that passes, fails or is terminated."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HELPER = ROOT / "tools" / "background.sh"

# Scripts whose background processes outlive them by design, each with its own way to stop them:
OUTLIVE_BY_DESIGN = {
    # the benchmark runs longer than one device call: it starts detached (setsid, nohup) and later calls collect it
    "tests/gpu/timing_lease.sh",
    # `start` leaves the cluster's daemons running (MariaDB through setsid); `stop` stops them by their pid files
    "tools/slurm-local-setup.sh",
}

_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
_BACKGROUND = re.compile(r"(?<![&>|<])&(?![&>])|\bnohup\b|\bsetsid\b")
_REGISTER = re.compile(r"\bbackground(_group)? \"")


def code_of(script: str) -> list[str]:
    """The lines of a bash script as commands: the text inside quotes emptied (the quotes kept; a line that ends
    inside quotes ends with a backslash, as the command goes on), comments and heredoc bodies (another program's
    text: python, a job script) blanked; one entry per line of the script."""
    out: list[str] = []
    quote = ""
    heredocs: list[str] = []
    lines = script.split("\n")
    i = 0
    while i < len(lines):
        raw, code, k = lines[i], [], 0
        while k < len(raw):
            c = raw[k]
            if quote:
                if c == "\\" and quote == '"':
                    k += 1
                elif c == quote:
                    quote = ""
                    code.append(c)
            elif c == "#" and (k == 0 or raw[k - 1] in " \t;("):
                break
            elif c in "'\"":
                quote = c
                code.append(c)
            else:
                found = _HEREDOC.match(raw, k) if raw.startswith("<<", k) and not raw.startswith("<<<", k) else None
                if found:
                    heredocs.append(found.group(2))
                    code.append("<<" + found.group(2))
                    k = found.end()
                    continue
                code.append(c)
                if c == "\\":
                    k += 1
                    code.append(raw[k:k + 1])
            k += 1
        out.append("".join(code) + ("\\" if quote else ""))   # a string that goes on: the command goes on
        i += 1
        for word in heredocs if not quote else []:
            while i < len(lines) and lines[i].strip() != word:
                out.append("")
                i += 1
            out.append("")
            i += 1
        heredocs = [] if not quote else heredocs
    return out


def command_lines(script: str) -> list[tuple[int, str]]:
    """(line number, command) of a bash script, continuation lines joined (see code_of)."""
    code = code_of(script)
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(code):
        start, text = i + 1, code[i]
        while text.endswith("\\") and i + 1 < len(code):
            i += 1
            text = text[:-1] + " " + code[i].strip()
        if text.strip():
            out.append((start, text))
        i += 1
    return out


def unstopped_starts(script: str) -> list[str]:
    """The background starts of a script that it does not stop on exit: each `&`, `nohup` or `setsid` start must
    be registered (`background "$pid"`; a `setsid` start: `background_group "$pid"`) within the next three
    command lines, and the script must source tools/background.sh and run `stop_background` from an EXIT trap."""
    lines = command_lines(script)
    problems = []
    for k, (number, text) in enumerate(lines):
        if not _BACKGROUND.search(text):
            continue
        after = [t for _, t in lines[k + 1:k + 4]]
        registered = [m for t in after for m in _REGISTER.finditer(t)]
        if not registered:
            problems.append(f"line {number}: started in the background, never registered: {text.strip()[:80]}")
        elif "setsid" in text and not any(m.group(1) for m in registered):
            problems.append(f"line {number}: a setsid start must be stopped as a group (background_group)")
    if problems or any(_BACKGROUND.search(t) for _, t in lines):
        if not re.search(r"^\s*(source|\.) \S*tools/background\.sh", script, re.MULTILINE):
            problems.append("does not source tools/background.sh")
        if not re.search(r"^\s*trap \S+ EXIT", script, re.MULTILINE) or "stop_background" not in script:
            problems.append("no EXIT trap that runs stop_background")
    return problems


def tool_scripts() -> list[Path]:
    return sorted([*ROOT.glob("tools/*.sh"), *ROOT.glob("tests/gpu/*.sh")])


@pytest.mark.parametrize("path", tool_scripts(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_tool_script_stops_what_it_starts(path: Path) -> None:
    if str(path.relative_to(ROOT)) in OUTLIVE_BY_DESIGN:
        pytest.skip("its background processes outlive it by design")
    assert unstopped_starts(path.read_text()) == []


def test_the_check_finds_an_unregistered_start_and_ignores_text_that_only_looks_like_one() -> None:
    bare = "#!/bin/bash\nsleep 60 &\nwait\n"
    assert unstopped_starts(bare)[0].startswith("line 2: started in the background")
    assert "no EXIT trap that runs stop_background" in unstopped_starts(bare)
    grouped = ("source tools/background.sh\ntrap stop_background EXIT\nsetsid chroot /r bash -c \\\n"
               "  'exec sim' > log 2>&1 &\nbackground \"$!\"\n")
    assert unstopped_starts(grouped) == ["line 3: a setsid start must be stopped as a group (background_group)"]
    assert unstopped_starts(grouped.replace("background \"", "background_group \"")) == []
    quiet = ("echo 'try: dockerd >/tmp/d.log 2>&1 &' && ls 2>&1 >/dev/null  # not & here\n"
             "cat > job.sh <<EOF\nsleep 300 & wait\nEOF\n")
    assert unstopped_starts(quiet) == []
    # the benchmark of the timing lease, the daemons of the local cluster: really started in the background
    for kept in OUTLIVE_BY_DESIGN:
        assert unstopped_starts((ROOT / kept).read_text()) != []


def _gone(pid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


# A script as the tools write them: a process group (a shell with a sleeping grandchild, as chroot -> env -> sim)
# and a single process that ignores SIGTERM, both registered; then the script ends as `$1` says.
SCRIPT = f"""set -euo pipefail
source {HELPER}
trap stop_background EXIT
setsid bash -c 'sleep 300 & echo $! > "$0/grandchild"; wait' "$2" &
background_group "$!"
echo $! > "$2/group"
bash -c 'trap "" TERM; echo $$ > "$0/stubborn"; while :; do sleep 0.1; done' "$2" &
background "$!"
for _ in $(seq 100); do [ -s "$2/grandchild" ] && [ -s "$2/stubborn" ] && break; sleep 0.05; done
echo ready > "$2/ready"
case $1 in
  pass) exit 0 ;;
  fail) false ;;
  term) while :; do sleep 0.1; done ;;
esac
"""


@pytest.mark.parametrize("ending", ["pass", "fail", "term"])
def test_a_script_stops_what_it_started_however_it_ends(tmp_path: Path, ending: str) -> None:
    env = {**os.environ, "BACKGROUND_GRACE_S": "1"}
    script = tmp_path / "tool.sh"
    script.write_text(SCRIPT)
    proc = subprocess.Popen(["bash", str(script), ending, str(tmp_path)], env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not (tmp_path / "ready").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        if ending == "term":
            proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    started = [int((tmp_path / name).read_text()) for name in ("group", "grandchild", "stubborn")
               if (tmp_path / name).exists()]
    try:
        assert rc == {"pass": 0, "fail": 1, "term": -signal.SIGTERM}[ending]   # bash ends by the signal after the trap
        assert len(started) == 3 and all(_gone(pid) for pid in started), started
    finally:
        for pid in started:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
