"""`harness preflight` and the checks `harness submit` runs before sbatch.

The seed recipes are checked against filled-in cluster profiles (`tests/fixtures/clusters/*-filled.yaml`)
whose paths point into a fake site built here: a fake staged checkpoint, a fake staged HF hub cache holding
the draft at a full commit hash, a fake imported image file per CPU architecture and a fake driver interpreter
per architecture. Slurm's answer about the partition's nodes is faked here (a partition named after its
cluster holds nodes of that cluster's architecture); tests/slurm asks the real local Slurm.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main as cli
from harness.preflight.run import cluster_preflight
from tests.pinned_corpus import staged_corpus

ROOT = Path(__file__).resolve().parents[2]
GB300 = ROOT / "recipes" / "musespark-fp4-gb300-sglang-agentic-dflash.yaml"
H200 = ROOT / "recipes" / "musespark-fp4-h200-sglang-agentic-dflash.yaml"
FIXTURES = ROOT / "tests" / "fixtures" / "clusters"
DRAFT_COMMIT = "46c90f41" + "0123456789abcdef0123456789abcdef"  # a fake full hash extending the recipe's short one
IMAGE_FILE = "lmsysorg_sglang_nightly-dev-20261021-c1c287a4.sqsh"


def fake_site(root: Path) -> Path:
    """Build the fake site the filled-in profiles point at; returns its root."""
    model = root / "scratch" / "models" / "Muse-Spark-Open-816B-A42B-NVFP4"
    model.mkdir(parents=True)
    (model / "config.json").write_text('{"architectures": ["MuseSparkForConditionalGeneration"]}')
    shutil.copy(ROOT / "harness" / "tokenizer" / "demo" / "tokenizer.json", model / "tokenizer.json")
    draft = root / "lustre" / "hf-hub" / "models--RadixArk--Muse-Spark-Open-DFlash2"
    (draft / "snapshots" / DRAFT_COMMIT).mkdir(parents=True)
    (draft / "snapshots" / DRAFT_COMMIT / "config.json").write_text("{}")
    (draft / "refs").mkdir()
    (draft / "refs" / "main").write_text(DRAFT_COMMIT)
    staged_corpus(root / "lustre" / "corpora")
    for arch in ("aarch64", "x86_64"):
        images = root / "lustre" / "harness" / "images" / arch
        images.mkdir(parents=True)
        (images / IMAGE_FILE).write_bytes(b"fake squashfs image")
    for arch in ("aarch64", "x86_64"):
        py = root / "lustre" / "harness" / f"venv-{arch}" / "bin" / "python"
        py.parent.mkdir(parents=True)
        py.write_text("#!/bin/sh\n")
    return root


def profile(tmp_path: Path, name: str, edit: dict[str, str] | None = None) -> Path:
    site = tmp_path / "fake-site"
    if not site.exists():
        fake_site(site)
    text = (FIXTURES / f"{name}-filled.yaml").read_text().replace("FAKE_SITE", str(site))
    for old, new in (edit or {}).items():
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


NODE_ARCH = {"gb300": "aarch64", "h200": "x86_64"}


@pytest.fixture(autouse=True)
def fake_nodes(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """What Slurm says about a partition's nodes: `gb300-001` is aarch64, `h200-001` x86_64; no partition set:
    Slurm cannot be asked. Its partitions, the user's account and QOS are those of the filled-in profiles."""
    arches = dict(NODE_ARCH)

    def ask(partition: str | None) -> tuple[str, dict[str, str]] | str:
        if partition is None:
            return "sinfo: not found (is this a Slurm login node?)"
        return partition, {f"{partition}-001": arches[partition]} if partition in arches else {}

    monkeypatch.setattr("harness.preflight.arch.ask_slurm", ask)
    from harness.preflight.slurm_names import Association, SlurmNames

    known = SlurmNames({"gb300": "up", "h200": "up", "other": "up"}, [Association("bench-team", "", ("normal",))], ["normal"],
                       frozenset({"associations", "limits", "qos"}), "bench")   # the filled-in profiles' names
    monkeypatch.setattr("harness.preflight.slurm_names.ask", lambda user=None: known)
    return arches


def codes(report: object, level: str = "fail") -> dict[str, str]:
    return {f.code: f.line() for f in report.findings if f.level == level}  # type: ignore[attr-defined]


@pytest.mark.parametrize(("recipe", "name"), [(GB300, "gb300"), (H200, "h200")])
def test_seed_recipes_pass_preflight_against_a_filled_in_profile(tmp_path: Path, recipe: Path, name: str) -> None:
    report = cluster_preflight(recipe, profile(tmp_path, name))
    assert report.ok, "\n".join(f.line() for f in report.failures())
    plan = report.plans[0]
    argv = plan.server.argv
    model_dir = tmp_path / "fake-site" / "scratch" / "models" / "Muse-Spark-Open-816B-A42B-NVFP4"
    assert argv[argv.index("--model-path") + 1] == "/models/Muse-Spark-Open-816B-A42B-NVFP4"
    assert argv[argv.index("--speculative-draft-model-revision") + 1] == DRAFT_COMMIT  # offline needs the full hash
    assert plan.server.env["HF_HUB_CACHE"] == "/hf-hub" and plan.server.env["HF_HUB_OFFLINE"] == "1"
    assert plan.client.tokenizer == str(model_dir)  # the served model's own tokenizer, as the client host sees it
    assert plan.client.corpus_cache == str(tmp_path / "fake-site" / "lustre" / "corpora")
    warned = codes(report, "warn")
    assert set(warned) == {"image_version_unknown", "traces"}
    assert "UNVERIFIED content" in warned["traces"]  # the fake site stages a stand-in of the pinned corpus
    passed = codes(report, "pass")
    assert "AIPerf's agentx scenario accepts it as a submission" in passed["aiperf"]


@pytest.mark.parametrize(("recipe", "name"), [(GB300, "gb300"), (H200, "h200")])
def test_submit_dry_run_of_the_seed_recipes_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   recipe: Path, name: str) -> None:
    rc = cli(["submit", str(recipe), "--cluster", str(profile(tmp_path, name)), "--dry-run",
              "--out", str(tmp_path / "out")])
    assert rc == 0, capsys.readouterr().err
    plan = json.loads(next((tmp_path / "out" / "slurm").glob("plan-*.json")).read_text())
    assert plan["points"][0]["client"]["tokenizer"].endswith("Muse-Spark-Open-816B-A42B-NVFP4")


def test_submit_says_preflights_warnings_and_a_refused_sbatch_leaves_no_script_or_plan(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from slurm import query

    def refuse(argv: list[str], env: dict[str, str] | None = None) -> str:
        raise query.SlurmError("sbatch: error: invalid partition specified: gb300")

    monkeypatch.setattr(query, "sbatch", refuse)
    rc = cli(["submit", str(GB300), "--cluster", str(profile(tmp_path, "gb300")), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 1 and "invalid partition" in err
    warned = [line for line in err.splitlines() if line.startswith("preflight: WARN")]
    assert warned, err                            # e.g. the nodes' CPU architecture could not be checked here
    assert not (tmp_path / "out" / "slurm").exists()


def test_shipped_profiles_with_placeholders_fail_one_line_each(capsys: pytest.CaptureFixture[str]) -> None:
    rc = cli(["preflight", str(GB300), "--cluster", str(ROOT / "clusters" / "gb300.yaml"), "--json"])
    assert rc == 2
    findings = json.loads(capsys.readouterr().out)["findings"]
    where = {f["where"] for f in findings if f["code"] == "cluster_placeholder"}
    assert where == {"clusters/gb300.yaml:account".replace("clusters", str(ROOT / "clusters")),
                     f"{ROOT}/clusters/gb300.yaml:partition", f"{ROOT}/clusters/gb300.yaml:container.image_cache_dir",
                     f"{ROOT}/clusters/gb300.yaml:driver.python"}


def test_a_failed_preflight_names_its_first_cause_on_its_first_line(capsys: pytest.CaptureFixture[str]) -> None:
    rc = cli(["preflight", str(GB300), "--cluster", str(ROOT / "clusters" / "gb300.yaml")])
    lines = capsys.readouterr().out.splitlines()
    first_fail = next(line for line in lines[1:] if line.startswith("FAIL"))
    code, rest = first_fail.split(None, 2)[1:]
    assert rc == 2 and lines[0] == f"preflight: FAIL: {code} {rest}"
    assert lines[-1].startswith("preflight: FAIL (")


def test_unset_partition_account_and_qos_are_warned_one_line_each(tmp_path: Path) -> None:
    path = profile(tmp_path, "gb300", {"account: bench-team": "account: null", "partition: gb300": "partition: null",
                                      "qos: normal": "qos: null"})
    report = cluster_preflight(GB300, path)
    warns = codes(report, "warn")
    assert report.ok and {"account_unset", "partition_unset", "qos_unset"} <= set(warns)
    assert warns["qos_unset"].endswith(f"{path}:qos: not set: Slurm uses the user's default qos (set it if the site "
                                       "requires one)")


def test_time_limit_typo_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = cli(["preflight", str(GB300), "--cluster", str(profile(tmp_path, "gb300")), "--time", "99:99:99",
])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and len(err.splitlines()) == 1 and "99:99:99" in err and "below 60" in err


def test_submit_refuses_before_sbatch(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = cli(["submit", str(GB300), "--cluster", str(ROOT / "clusters" / "gb300.yaml"), "--dry-run",
              "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 2 and "FAIL cluster_placeholder" in err and "nothing submitted" in err
    assert not (tmp_path / "out" / "slurm").exists()


def test_walltime_must_cover_ready_timeout_window_grace_and_teardown(tmp_path: Path) -> None:
    path = profile(tmp_path, "gb300", {'time_limit: "02:30:00"': 'time_limit: "00:30:00"'})
    fails = codes(cluster_preflight(GB300, path))
    assert "= 7350 s > 1500 s" in fails["walltime"] and "at least 02:08:00" in fails["walltime"]
    ok = cluster_preflight(GB300, path, time_limit="02:08:00")
    assert "walltime" not in codes(ok)


def test_gpus_per_task_against_tp_times_pp(tmp_path: Path) -> None:
    path = profile(tmp_path, "gb300", {"exclusive: true": "exclusive: true\ngpus_per_task: 2"})
    fails = codes(cluster_preflight(GB300, path))
    assert "tp×pp = 4 GPUs, an array task" in fails["gpus_per_task"] and "gets 2" in fails["gpus_per_task"]
    fails = codes(cluster_preflight(GB300, profile(tmp_path, "h200")))
    assert "'gb300' but" in fails["gpu_type"]


def test_sglang_version_of_the_image_and_the_models_minimum(tmp_path: Path) -> None:
    path = profile(tmp_path, "gb300")
    base: list[str] = []
    fails = codes(cluster_preflight(GB300, path, overrides=[*base, "image=lmsysorg/sglang:v0.5.22-cu130"]))
    assert "carries SGLang 0.5.22" in fails["image_version"]
    assert "SGLang 0.5.22 cannot serve muse-spark-open-816b-a42b-nvfp4: it needs >= 0.5.23" in fails["model_min_version"]
    fails = codes(cluster_preflight(GB300, path, overrides=[*base, "server.sglang_version=0.5.20"]))
    assert "server.sglang_version: SGLang 0.5.20 cannot serve" in fails["model_min_version"]


def test_missing_corpus_checkpoint_draft_tokenizer_and_image(tmp_path: Path) -> None:
    path = profile(tmp_path, "gb300")
    site = tmp_path / "fake-site"
    (site / "scratch" / "models" / "Muse-Spark-Open-816B-A42B-NVFP4" / "tokenizer.json").unlink()
    shutil.rmtree(site / "lustre" / "hf-hub" / "models--RadixArk--Muse-Spark-Open-DFlash2" / "snapshots")
    (site / "lustre" / "harness" / "images" / "aarch64" / IMAGE_FILE).unlink()
    shutil.rmtree(site / "lustre" / "corpora")
    fails = {f.where.split(":")[-1]: f.line() for f in cluster_preflight(GB300, path).failures()}
    assert "is not staged in" in fails["client.traces"] and "harness traces stage" in fails["client.traces"]
    assert "@46c90f41: a short commit hash; none of the cached snapshots" in fails["speculative.draft_model"]
    assert "the checkpoint has no tokenizer.json" in fails["client.tokenizer"]
    assert f"aarch64/{IMAGE_FILE} missing" in fails["container.image_cache_dir"]
    assert "--arch aarch64" in fails["container.image_cache_dir"]


def test_a_short_draft_hash_must_name_one_cached_snapshot(tmp_path: Path) -> None:
    path = profile(tmp_path, "gb300")
    snaps = tmp_path / "fake-site" / "lustre" / "hf-hub" / "models--RadixArk--Muse-Spark-Open-DFlash2" / "snapshots"
    (snaps / ("46c90f41" + "f" * 32)).mkdir()
    (snaps / ("46c90f41" + "f" * 32) / "config.json").write_text("{}")
    fails = codes(cluster_preflight(GB300, path))
    assert "a short commit hash; several" in fails["checkpoint"]


def test_an_hf_model_without_staging_or_cache_cannot_resolve_its_tokenizer(tmp_path: Path) -> None:
    path = profile(tmp_path, "gb300", {"hf_cache: /hf-hub": "hf_cache: null",
                                      "  RadixArk/Muse-Spark-Open-816B-A42B-NVFP4: /models/Muse-Spark-Open-816B-A42B-NVFP4\n":
                                      "  {}\n"})
    path.write_text(path.read_text().replace("model_staging:\n  {}", "model_staging: {}"))
    report = cluster_preflight(GB300, path)
    fails = {f.where.split(":")[-1]: f.message for f in report.failures()}
    assert "is an HF id: map it in model_staging" in fails["model.path"]
    assert "cannot resolve the served model's tokenizer" in fails["client.tokenizer"]


def test_the_client_never_uses_the_demo_tokenizer_for_sglang(tmp_path: Path) -> None:
    from harness.errors import UserError
    from harness.point.run import client_tokenizer
    from harness.recipe.points import load_plans

    _, plans = load_plans(GB300, ["c1"])
    with pytest.raises(UserError, match="with engine sglang AIPerf must use the served model's tokenizer"):
        client_tokenizer(plans[0])
    _, sim = load_plans(GB300, ["c1"], ["engine=sim"])
    assert client_tokenizer(sim[0])["kind"] == "demo (simulator only)"
    staged = plans[0].model_copy(update={"client": plans[0].client.model_copy(update={"tokenizer": "/m/Muse"})})
    assert client_tokenizer(staged) == {"source": "/m/Muse", "name": "local/Muse", "kind": "model"}


def test_run_with_sglang_resolves_the_models_tokenizer_or_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    from harness import preflight
    from harness.recipe.points import load_plans

    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    corpora = staged_corpus(tmp_path / "corpora")
    rc = cli(["run", str(GB300), "--point", "c1", "--corpus-cache", str(corpora), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and "client.tokenizer: cannot resolve the served model's tokenizer" in err
    assert not (tmp_path / "o").exists()  # nothing launched
    hub = tmp_path / "fake-hub"
    snap = hub / "models--RadixArk--Muse-Spark-Open-816B-A42B-NVFP4" / "snapshots" / ("ab" * 20)
    snap.mkdir(parents=True)
    (snap / "config.json").write_text("{}")
    (snap / "tokenizer.json").write_text("{}")
    (snap.parent.parent / "refs").mkdir()
    (snap.parent.parent / "refs" / "main").write_text("ab" * 20)
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    recipe, plans = load_plans(GB300, ["c1"])
    report = preflight.local(recipe, plans, str(GB300), corpora)
    assert report.ok and report.plans[0].client.tokenizer == str(snap)


def test_tokenizer_registration_is_safe_when_points_run_at_once(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from harness.tokenizer import DEMO_TOKENIZER_DIR, register_in_hf_cache

    with ThreadPoolExecutor(8) as pool:
        names = list(pool.map(lambda _: register_in_hf_cache(DEMO_TOKENIZER_DIR, "harness/demo", tmp_path), range(32)))
    assert set(names) == {"harness/demo"}
    snaps = list((tmp_path / "hub" / "models--harness--demo" / "snapshots").iterdir())
    assert len(snaps) == 1 and (snaps[0] / "tokenizer.json").is_file()  # no leftover temporary directories


def test_nodes_of_another_architecture_fail_naming_both(tmp_path: Path, fake_nodes: dict[str, str]) -> None:
    fake_nodes["gb300"] = "x86_64"
    fails = codes(cluster_preflight(GB300, profile(tmp_path, "gb300")))
    assert fails["cpu_arch"].endswith(f"{tmp_path}/gb300.yaml:cpu_arch: aarch64, but the nodes of partition 'gb300' "
                                      "are x86_64 (gb300-001): set cpu_arch to x86_64 or use a partition of aarch64 "
                                      "nodes")
    assert fails["cpu_arch"].startswith("FAIL")


def test_the_architecture_is_a_warning_when_slurm_cannot_say(tmp_path: Path) -> None:
    report = cluster_preflight(GB300, profile(tmp_path, "gb300", {"partition: gb300": "partition: other"}))
    assert report.ok and "no node of partition 'other' reports its architecture" in codes(report, "warn")["cpu_arch"]
    assert codes(cluster_preflight(GB300, profile(tmp_path, "gb300")), "pass")["cpu_arch"].endswith(
        "cpu_arch: aarch64: the 1 node(s) of partition 'gb300' are aarch64")


def _venv(root: Path, arch: str) -> Path:
    """A venv whose compiled packages are built for `arch`."""
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "python").write_text("#!/bin/sh\n")
    core = root / "lib" / "python3.12" / "site-packages" / "pydantic_core"
    core.mkdir(parents=True)
    (core / f"_pydantic_core.cpython-312-{arch}-linux-gnu.so").write_bytes(b"")
    return root / "bin" / "python"


def test_a_driver_venv_of_another_architecture_fails(tmp_path: Path) -> None:
    x86 = _venv(tmp_path / "venv-x86", "x86_64")
    arm = _venv(tmp_path / "venv-arm", "aarch64")
    path = profile(tmp_path, "gb300")
    fails = codes(cluster_preflight(GB300, path, python=str(x86)))
    assert fails["driver"].endswith(f"--python: {x86}: its venv is built for x86_64, but cpu_arch is aarch64: build "
                                    "it on an aarch64 host")
    assert codes(cluster_preflight(GB300, path, python=str(arm)), "pass")["driver"].endswith(f"{arm} (aarch64)")


def test_preflight_checks_the_python_submit_will_use(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = profile(tmp_path, "gb300")
    rc = cli(["preflight", str(GB300), "--cluster", str(path), "--python", str(tmp_path / "nope" / "python")])
    assert rc == 2 and f"FAIL driver                 --python: {tmp_path}/nope/python: no such interpreter" in \
        capsys.readouterr().out
    rc = cli(["submit", str(GB300), "--cluster", str(path), "--python", str(tmp_path / "nope" / "python"),
              "--dry-run", "--out", str(tmp_path / "out")])
    assert rc == 2 and "--python: " in capsys.readouterr().err


def test_an_unset_driver_on_a_machine_of_another_architecture_fails(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    path = profile(tmp_path, "gb300", {"driver:\n  python: ": "driver:\n  python: null # "})
    monkeypatch.setattr("harness.preflight.arch.local_arch", lambda: "x86_64")
    fails = codes(cluster_preflight(GB300, path))
    assert "this x86_64 machine's interpreter, but cpu_arch is aarch64: set driver.python (or --python) to a venv " \
           "built on an aarch64 host" in fails["driver"]
    monkeypatch.setattr("harness.preflight.arch.local_arch", lambda: "aarch64")
    assert "driver" in codes(cluster_preflight(GB300, path), "warn")


def test_an_aarch64_driver_venv_still_to_be_built_is_warned_of_the_compiler_its_source_builds_need(
        tmp_path: Path) -> None:
    path = profile(tmp_path, "gb300")
    missing = str(tmp_path / "venv-arm-to-build" / "bin" / "python")
    warned = codes(cluster_preflight(GB300, path, python=missing), "warn")
    assert "the driver venv is still to be built on an aarch64 host, and crick (no aarch64 wheel on PyPI) " \
           "compile(s) there: that host needs crick: a C compiler and the Python headers" in warned["driver_build"]
    assert "--find-links WHEELHOUSE" in warned["driver_build"]
    assert warned["driver_build"].startswith(f"WARN driver_build           {path}:cpu_arch: ")
    # built already (an aarch64 venv there): nothing to warn of
    arm = _venv(tmp_path / "venv-arm", "aarch64")
    assert "driver_build" not in codes(cluster_preflight(GB300, path, python=str(arm)), "warn")
    # x86_64 nodes install every dependency from wheels
    assert "driver_build" not in codes(cluster_preflight(H200, profile(tmp_path, "h200"), python=missing), "warn")


def test_a_simulator_recipe_on_exclusive_gpu_nodes_is_warned_of_the_idle_gpus(tmp_path: Path) -> None:
    quickstart = ROOT / "recipes" / "quickstart-sim.yaml"
    warned = codes(cluster_preflight(quickstart, profile(tmp_path, "h200")), "warn")
    assert "8 GPUs idle per point" in warned["gpu_idle"]
    assert "gpu_idle" not in codes(cluster_preflight(quickstart, ROOT / "clusters" / "local-ci.yaml"), "warn")
