"""`harness ingest RUN_DIR... [--db PATH|URL]`: store every point run of each run directory in the results store
(`harness.store`). The same point run ingested twice is one entry; a later run of the point is a new one."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_db_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", metavar="PATH|URL",
                        help="the results store: a SQLite file or a postgresql:// URL (default: HARNESS_DB, else "
                             "$XDG_DATA_HOME/harness/results.sqlite3 or ~/.local/share/harness/results.sqlite3)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dirs", type=Path, nargs="+", metavar="RUN_DIR",
                        help="a run directory (--out of run or sweep; searched recursively) or one point's directory")
    add_db_argument(parser)


def main(args: argparse.Namespace) -> int:
    from harness.store.db import open_store
    from harness.store.ingest import ingest, summary
    from harness.store.location import required

    location = required(args.db)
    with open_store(location) as store:
        results = ingest(store, args.run_dirs)
    for r in results:
        print(f"{r.source}: {r.new} new, {r.known} already stored" + (f" (run {r.run_id})" if r.run_id else ""))
    print(summary(results, location.shown))
    return 0
