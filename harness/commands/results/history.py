"""`harness history [--metric M] [filters] [--out DIR]`: a metric of each config and point over time from the results
store: a table, `history.png` (each run's value and 95 % interval, changes marked) and `history.html`."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.commands.results.ingest import add_db_argument


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from harness.history.series import METRICS

    parser.add_argument("--metric", choices=sorted(METRICS), default="e2el_p90", help="the metric (default e2el_p90)")
    parser.add_argument("--recipe", type=Path, help="only the config key of this recipe file")
    parser.add_argument("--config", help="only this config key")
    parser.add_argument("--point", help="only this point, e.g. c4")
    parser.add_argument("--tag", help="only runs with this --tag")
    parser.add_argument("--host", help="only runs on this host")
    parser.add_argument("--since", metavar="YYYY-MM-DD", help="only runs from this day on (UTC)")
    parser.add_argument("--until", metavar="YYYY-MM-DD", help="only runs up to this day (UTC, inclusive)")
    parser.add_argument("--out", type=Path, default=Path("history"),
                        help="where history.png and history.html go (default ./history)")
    add_db_argument(parser)


def _recipe_key(path: Path) -> str:
    import yaml

    from harness.errors import UserError
    from harness.inputs.json_input import read_file_bytes

    try:
        data = yaml.safe_load(read_file_bytes(path, "recipe"))
    except yaml.YAMLError as exc:
        raise UserError(f"{path}: not YAML ({' '.join(str(exc).split())})") from None
    key = data.get("config_key") if isinstance(data, dict) else None
    if not isinstance(key, str):
        raise UserError(f"{path}: config_key: expected a string (a recipe file)")
    return key


def main(args: argparse.Namespace) -> int:
    from harness.errors import UserError
    from harness.history.render import table, write
    from harness.history.series import histories
    from harness.store.db import open_store
    from harness.store.location import required
    from harness.store.select import select_entries

    terms = {k: v for k, v in (("config", args.config), ("point", args.point), ("tag", args.tag),
                               ("host", args.host), ("since", args.since), ("until", args.until)) if v}
    if args.recipe is not None:
        key = _recipe_key(args.recipe)
        if args.config and args.config != key:
            raise UserError(f"--recipe {args.recipe} is config {key}, not --config {args.config}")
        terms["config"] = key
    location = required(args.db)
    with open_store(location) as store:
        found = histories(select_entries(store, terms, light=True), args.metric)
    if not found:
        raise UserError(f"results store {location.shown}: no entries match "
                        f"{', '.join(f'{k}={v}' for k, v in terms.items()) or 'anything (empty store)'}")
    print(table(found), end="")
    png, page = write(found, args.out)
    print(f"plot: {png}\npage: {page}")
    return 0
