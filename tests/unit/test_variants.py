"""Tuned variants: their own directory beside the baseline, their own series in reports, compare --variant."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main as cli_main
from harness.errors import UserError
from harness.point.record.result import point_dir
from harness.point.state.variant import check_tag, derived_name, secret_mark, variant_name
from harness.provenance import harness_commit
from harness.recipe.points import load_plans
from harness.report import build_report
from harness.report.analysis.compare import variant_sides
from harness.report.results.points import load_results

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "results"


def test_variant_names():
    assert variant_name([], None) is None
    assert variant_name(["args.max-running-requests=64"], None) == "max-running-requests=64"
    assert variant_name(["args.max-running-requests=64", "env.SGLANG_TIMEOUT_KEEP_ALIVE=900", "client.duration_s=20"],
                        None) == "max-running-requests=64,SGLANG_TIMEOUT_KEEP_ALIVE=900,duration_s=20"
    # a variable or argument outside the allow-list is named by its key and a mark, never by its value
    assert variant_name(["env.SGLANG_X=1", "server.env.MY_SETTING=v"], None) \
        == f"SGLANG_X={secret_mark('1')},MY_SETTING={secret_mark('v')}"
    assert variant_name(["args.not-a-sglang-flag=v"], None) == f"not-a-sglang-flag={secret_mark('v')}"
    assert variant_name(["args.max-running-requests=64"], "mrr64") == "mrr64"
    assert derived_name(["sim_args.sim-crash-after=30", "model.path=/a/b c"]) \
        == "sim_args.sim-crash-after=30,model.path=_a_b_c"
    long = derived_name([f"client.knob-{i}=value-{i}" for i in range(12)])
    assert len(long) == 80 and long != derived_name([f"client.knob-{i}=value-{i}" for i in range(13)])


@pytest.mark.parametrize("bad", ["", "../up", "a/b", "-x", "x" * 81, "with space"])
def test_bad_tags_are_one_line_errors(bad):
    with pytest.raises(UserError, match="--tag"):
        check_tag(bad)


def test_point_dir_of_a_variant_is_beside_the_baseline(tmp_path):
    _, plans = load_plans(ROOT / "recipes" / "quickstart-sim.yaml", ["c4"], ["args.max-running-requests=64"])
    assert point_dir(tmp_path, plans[0]) == tmp_path / "quickstart-sim" / "conc4"
    assert point_dir(tmp_path, plans[0], "max-running-requests=64") \
        == tmp_path / "quickstart-sim" / "variants" / "max-running-requests=64" / "conc4"


def test_harness_commit_from_env_and_git(monkeypatch):
    harness_commit.cache_clear()
    monkeypatch.setenv("HARNESS_GIT_COMMIT", "0123456789abcdef0123456789abcdef01234567")
    assert harness_commit() == {"commit": "0123456789abcdef0123456789abcdef01234567", "dirty": None,
                                "source": "HARNESS_GIT_COMMIT"}
    harness_commit.cache_clear()
    monkeypatch.setenv("HARNESS_GIT_COMMIT", "not a sha")
    assert harness_commit()["commit"] is None and "not a commit id" in harness_commit()["reason"]
    harness_commit.cache_clear()
    monkeypatch.delenv("HARNESS_GIT_COMMIT")
    info = harness_commit()
    harness_commit.cache_clear()
    if (ROOT / ".git").exists():
        assert len(info["commit"]) == 40 and info["source"] == "git" and isinstance(info["dirty"], bool)
    else:
        assert info["commit"] is None and "not a git checkout" in info["reason"]


def _with_variant(tmp_path: Path) -> Path:
    """The sim-run fixture plus a variant `mrr64` of c4 and c8 with 10% more throughput."""
    run = tmp_path / "run"
    shutil.copytree(FIX / "sim-run", run)
    for conc in (4, 8):
        src = run / "quickstart-sim" / f"conc{conc}" / f"bmk_agentic_quickstart-sim_conc{conc}.json"
        data = json.loads(src.read_text())
        data.update(variant="mrr64", tag="mrr64", overrides=["args.max-running-requests=64"],
                    note="more running requests", harness_commit={"commit": "ab" * 20, "dirty": True})
        per_gpu = data["request_metrics"]["throughput"]["per_gpu"]
        per_gpu["total_tput_tps"] = round(per_gpu["total_tput_tps"] * 1.1, 6)
        dst = run / "quickstart-sim" / "variants" / "mrr64" / f"conc{conc}" / src.name
        dst.parent.mkdir(parents=True)
        dst.write_text(json.dumps(data))
    return run


def test_report_draws_a_variant_as_its_own_labelled_series(tmp_path):
    run = _with_variant(tmp_path)
    out = build_report([run], tmp_path / "report")
    keys = [(c.key, [p.conc for p in c.points]) for c in out.curves]
    assert keys == [("Qwen3-0.6B/agentic-coding/sim_sglang/bf16", [1, 2, 4, 8, 16, 32]),
                    ("quickstart-sim [mrr64]", [4, 8])]   # the recipe's series, and the variant beside it
    baseline, tuned = out.curves
    assert baseline.point(4).total_tput_per_gpu == 300.0 and tuned.point(4).total_tput_per_gpu == 330.0
    assert tuned.label == "quickstart-sim [mrr64] (args.max-running-requests=64) [sim]"
    named = dataclasses.replace(tuned, variant="max-running-requests=64")   # a name made from the overrides
    assert named.label == "quickstart-sim [max-running-requests=64] [sim]"   # not spelled twice
    assert not baseline.warnings   # nothing mixed into the baseline's c4
    html = out.html_path.read_text()
    assert "Tuned variant <code>mrr64</code>" in html and "note: more running requests" in html
    assert "abababababababab" in html
    md = out.markdown_path.read_text()
    assert "### quickstart-sim [mrr64] (SIMULATED)" in md and "`args.max-running-requests=64`" in md
    data = json.loads(out.json_path.read_text())
    assert [(c["variant"], c["overrides"]) for c in data["curves"]] == [
        (None, []), ("mrr64", ["args.max-running-requests=64"])]
    assert data["curves"][1]["points"][0]["note"] == "more running requests"


def test_compare_variant_pairs_each_point_with_its_baseline(tmp_path, capsys):
    run = _with_variant(tmp_path)
    assert cli_main(["compare", str(run), "--variant", "mrr64", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (comp,) = data["comparisons"]
    assert [p["conc"] for p in comp["points"]] == [4, 8]
    assert comp["points"][0]["total_tput_per_gpu"] == {"old": 300.0, "new": 330.0, "pct": 10.0}
    assert comp["removed"] == [1, 2, 16, 32] and comp["added"] == []
    assert cli_main(["compare", str(run), "--variant", "mrr64"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0] == f"A = {run} as the recipe is written; B = its variant mrr64"
    assert "300.0 -> 330.0 (+10.0%)" in text
    assert "only in the variant: none; not run in the variant: c1, c2, c16, c32" in text   # not "removed"


def test_compare_variant_errors(tmp_path, capsys):
    run = _with_variant(tmp_path)
    with pytest.raises(UserError, match=r"no results of that variant \(variants found: mrr64\)"):
        variant_sides(load_results([run]), "other")
    assert cli_main(["compare", str(run)]) == 2
    assert "give two runs (A B) or one run and --variant NAME" in capsys.readouterr().err


def test_compare_two_runs_keeps_variants_apart(tmp_path, capsys):
    run = _with_variant(tmp_path)
    assert cli_main(["compare", str(run), str(run), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["config_key"] for c in data["comparisons"]] == ["quickstart-sim", "quickstart-sim [mrr64]"]


def test_report_csv_has_one_row_per_point_with_every_metric(tmp_path):
    import csv

    out = build_report([_with_variant(tmp_path)], tmp_path / "report")
    rows = list(csv.DictReader(out.csv_path.open()))
    assert [(r["variant"], r["conc"]) for r in rows] == [
        ("", "1"), ("", "2"), ("", "4"), ("", "8"), ("", "16"), ("", "32"), ("mrr64", "4"), ("mrr64", "8")]
    c4 = rows[2]
    assert float(c4["total_tput_per_gpu"]) == 300.0 and float(c4["e2el_p90"]) == 3.0
    assert float(rows[6]["total_tput_per_gpu"]) == 330.0 and rows[6]["overrides"] == "args.max-running-requests=64"
    assert c4["power"] == "not measured (simulator)" and c4["simulated"] == "true"
    assert {f"{m}_{s}" for m in ("ttft", "e2el", "itl", "tpot", "intvty", "e2e_norm_intvty")
            for s in ("mean", "p50", "p75", "p90", "p95", "p99", "std")} <= set(rows[0])
    assert rows[5]["valid"] == "false" and rows[5]["invalid_reasons"] == "error_rate"


def test_a_tagged_run_without_overrides_says_so(tmp_path):
    run = _with_variant(tmp_path)
    for path in (run / "quickstart-sim" / "variants" / "mrr64").glob("conc*/*.json"):
        path.write_text(json.dumps({**json.loads(path.read_text()), "overrides": []}))
    out = build_report([run], tmp_path / "report")
    assert "Tagged run <code>mrr64</code> of <code>quickstart-sim</code>: the recipe as written, no overrides." \
        in out.html_path.read_text()
    md = out.markdown_path.read_text()
    assert "Tagged run `mrr64` of `quickstart-sim`: the recipe as written, no overrides." in md
    assert "Tuned variant" not in md


def test_run_says_where_a_variant_lands_and_how_to_compare_it(tmp_path, capsys):
    import shlex

    from harness.commands.running.run import compare_hint, landing_line

    run = _with_variant(tmp_path)
    pdir = run / "quickstart-sim" / "variants" / "mrr64" / "conc4"
    assert landing_line(4, pdir, "mrr64") == f"c4: variant mrr64 -> {pdir} (the recipe's own c4 is left as it is)"
    assert landing_line(4, run / "quickstart-sim" / "conc4", None) == f"c4: the recipe as written -> {run}/quickstart-sim/conc4"
    assert landing_line(4, run / "quickstart-sim" / "conc4", None, replaces=True).endswith(
        "conc4 (it replaces the completed result there, kept under attempts/; --tag NAME keeps both)")
    assert landing_line(4, pdir, "mrr64", replaces=True).endswith(
        "(the recipe's own c4 is left as it is; it replaces the completed result there, kept under attempts/)")
    hint = compare_hint(run / "quickstart-sim", "mrr64", "harness sweep recipes/quickstart-sim.yaml")
    argv = shlex.split(hint.split(": ", 1)[1])
    assert argv[0] == "harness" and cli_main(argv[1:]) == 0   # the printed command works as printed
    assert "300.0 -> 330.0 (+10.0%)" in capsys.readouterr().out


def test_compare_of_a_variant_without_the_recipes_own_points_suggests_compare_a_b(tmp_path, capsys):
    run = _with_variant(tmp_path)
    for baseline in (run / "quickstart-sim").glob("conc*"):
        shutil.rmtree(baseline)
    variants = run / "quickstart-sim" / "variants"
    assert cli_main(["compare", str(run), "--variant", "mrr64"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["error: --variant mrr64: no results of the recipe as written beside it to compare with",
                   f"hint: no results of the recipe as written in {run / 'quickstart-sim'} to compare the variant "
                   f"with; run them first: harness sweep recipes/quickstart-sim.yaml --out {run}; then: harness "
                   f"compare {run / 'quickstart-sim'} --variant mrr64"]
    shutil.copytree(variants / "mrr64", variants / "mrr32")   # a second variant beside it: the hint names it
    for result in (variants / "mrr32").glob("conc*/bmk_agentic_*.json"):
        data = json.loads(result.read_text())
        data.update(variant="mrr32", tag="mrr32", overrides=["args.max-running-requests=32"])
        result.write_text(json.dumps(data))
    assert cli_main(["compare", str(run), "--variant", "mrr64"]) == 2
    hint = capsys.readouterr().err.splitlines()[1]
    command = hint.split("beside it: ", 1)[1]
    assert command == f"harness compare {variants / 'mrr32'} {variants / 'mrr64'}"
    assert cli_main(command.split()[1:]) == 0   # the suggested command works as printed
    assert "300.0" not in capsys.readouterr().out   # variant against variant, not the removed baseline


def test_the_hint_after_a_variant_run_without_a_baseline_is_compare_a_b(tmp_path):
    from harness.commands.running.run import compare_hint

    run = _with_variant(tmp_path)
    for baseline in (run / "quickstart-sim").glob("conc*"):
        shutil.rmtree(baseline)
    assert compare_hint(run / "quickstart-sim", "mrr64", "harness run recipes/quickstart-sim.yaml --point c4") == (
        f"no results of the recipe as written in {run / 'quickstart-sim'} to compare the variant with; run them "
        f"first: harness run recipes/quickstart-sim.yaml --point c4; then: harness compare {run / 'quickstart-sim'} "
        "--variant mrr64")
