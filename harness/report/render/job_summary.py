"""The GitHub job summary of a CI sweep, as Markdown that renders: command output (preflight, the final states,
the eval gate) in fenced code blocks under a heading, and the report's markdown without image links, since a
job summary cannot show the files a run leaves on the runner; the plots are named with where they are instead.

    python -m harness.report.render.job_summary fence TITLE [FILE]          # FILE (default: stdin) as a section
    python -m harness.report.render.job_summary report REPORT_MD [--artifact NAME] [--where DIR]

Each prints the Markdown on stdout, for appending to `$GITHUB_STEP_SUMMARY`.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

IMAGE = re.compile(r"!\[([^\]]*)\]\(\s*<?([^)>\s]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REMOTE = re.compile(r"^https?://", re.IGNORECASE)
BACKTICKS = re.compile(r"`+")


def fence(text: str, info: str = "text") -> str:
    """`text` as one fenced code block whose fence is longer than any run of backticks inside it, so nothing
    in the output can close it early (CommonMark's rule); ends with a newline."""
    longest = max((len(m.group(0)) for m in BACKTICKS.finditer(text)), default=0)
    ticks = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{ticks}{info}\n{body}{ticks}\n"


def section(title: str, text: str) -> str:
    """A level-3 heading, then `text` fenced; blank lines around both, so it never joins a paragraph."""
    shown = text if text.strip() else "(no output)\n"
    return f"\n### {title}\n\n{fence(shown)}\n"


def without_local_images(markdown: str, artifact: str | None = None, where: str | None = None) -> str:
    """`markdown` with every image whose target is not an http(s) URL taken out (a job summary cannot reach a
    file on the runner). A line that held only images is dropped, with one note in place of the first naming the
    images and where they are (`artifact`: the uploaded artifact's name; `where`: the directory on the runner);
    an image within other text becomes its name in a code span."""
    removed: list[str] = []
    out: list[str] = []
    note_at: int | None = None
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if fenced or "![" not in line:
            out.append(line)
            continue
        local = [m for m in IMAGE.finditer(line) if not REMOTE.match(m.group(2))]
        if not local:
            out.append(line)
            continue
        removed += [m.group(2) for m in local]
        if not IMAGE.sub("", line).strip():
            if note_at is None:
                note_at = len(out)
                out.append("")
            continue
        out.append(IMAGE.sub(lambda m: m.group(0) if REMOTE.match(m.group(2)) else f"`{Path(m.group(2)).name}`",
                             line))
    if note_at is not None:
        out[note_at] = plots_note(removed, artifact, where)
    return "\n".join(out) + ("\n" if markdown.endswith("\n") else "")


def plots_note(images: list[str], artifact: str | None, where: str | None) -> str:
    """One line naming the images a job summary cannot show and where to find them."""
    names = ", ".join(f"`{Path(i).name}`" for i in dict.fromkeys(images))
    places = []
    if artifact:
        places.append(f"in the artifact `{artifact}` under `report/`")
    if where:
        places.append(f"on the runner in `{where}`")
    found = " and ".join(places) if places else "beside `report.md`"
    return (f"The plots ({names}) are files a job summary cannot show: they are {found}, with `report.html`, "
            "which shows them.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.report.render.job_summary", description=__doc__,
                                     allow_abbrev=False)
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fence", allow_abbrev=False, help="a heading, then a file's text (default: stdin) in a fenced code block")
    f.add_argument("title")
    f.add_argument("file", nargs="?", type=Path)
    r = sub.add_parser("report", allow_abbrev=False, help="the report's markdown without the images a job summary cannot show")
    r.add_argument("report_md", type=Path)
    r.add_argument("--artifact", help="name of the uploaded artifact that holds the report")
    r.add_argument("--where", help="the report's directory on the runner")
    args = parser.parse_args(argv)
    if args.command == "fence":
        text = args.file.read_text(errors="replace") if args.file else sys.stdin.read()
        sys.stdout.write(section(args.title, text))
    else:
        sys.stdout.write(without_local_images(args.report_md.read_text(), args.artifact, args.where))
    return 0


if __name__ == "__main__":
    sys.exit(main())
