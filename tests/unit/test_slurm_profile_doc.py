"""The cluster profile reference: `docs/cluster-profile.md` is the generated page, every field is described,
its example validates, and `harness profile --schema --json-schema` is a schema a real validator accepts."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from pydantic import BaseModel

from harness.cli import main as cli_main
from slurm.profile import ClusterProfile, parse_profile
from slurm.profile_doc import example_text, markdown

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "cluster-profile.md"
PROFILES = sorted((ROOT / "clusters").glob("*.yaml")) + sorted((ROOT / "tests" / "fixtures" / "clusters").glob("*.yaml"))


def _run(*argv: str) -> tuple[int, str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = cli_main(list(argv))
    return rc, buf.getvalue()


def _fields(model: type[BaseModel], prefix: str = "") -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for name, field in model.model_fields.items():
        out.append((prefix + name, field))
        for arg in (*getattr(field.annotation, "__args__", ()), field.annotation):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                out += _fields(arg, f"{prefix}{name}.")
    return out


def test_committed_page_is_the_generated_one() -> None:
    assert PAGE.read_text() == markdown(), "regenerate it: python -m slurm.profile_doc > docs/cluster-profile.md"
    assert _run("profile", "--schema") == (0, markdown())


def test_every_field_is_described_and_in_the_table() -> None:
    page = markdown()
    for name, field in _fields(ClusterProfile):
        assert (field.description or "").strip(), f"{name}: no description"  # type: ignore[attr-defined]
        assert f"| `{name}` |" in page


def test_the_example_sets_every_field_and_validates() -> None:
    data = yaml.safe_load(example_text(PAGE.read_text()))
    profile = parse_profile(data, "docs/cluster-profile.md")
    assert set(data) == set(ClusterProfile.model_fields)
    assert set(data["container"]) == {"runtime", "image_cache_dir"} and profile.cpu_arch == "aarch64"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    rc, text = _run("profile", "--schema", "--json-schema")
    schema = json.loads(text)
    assert rc == 0 and schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.name)
def test_shipped_and_fixture_profiles_validate_against_the_schema(validator, path: Path) -> None:
    assert [e.message for e in validator.iter_errors(yaml.safe_load(path.read_text()))] == []


def test_mistakes_the_loader_rejects_are_schema_errors_too(validator) -> None:
    good = yaml.safe_load((ROOT / "clusters" / "h200.yaml").read_text())
    for mutate in (lambda p: p.update(acount="x"), lambda p: p["container"].update(runtime="podman"),
                   lambda p: p.update(cpu_arch="arm64"), lambda p: p.pop("gpus_per_node"),
                   lambda p: p.update(signal_margin_s=1)):
        bad = json.loads(json.dumps(good))
        mutate(bad)
        assert list(validator.iter_errors(bad)), bad


def test_profile_command_checks_and_reads_one_value(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run("profile", str(ROOT / "clusters" / "gb300.yaml"), "--get", "cpu_arch") == (0, "aarch64\n")
    assert _run("profile", str(ROOT / "clusters" / "local-ci.yaml"), "--get", "container.image_cache_dir") == (0, "\n")
    rc, text = _run("profile", str(ROOT / "clusters" / "local-ci.yaml"), "--json")
    assert rc == 0 and json.loads(text)["gpu_directive"] == "gres"   # defaults filled in
    assert _run("profile", str(ROOT / "clusters" / "gb300.yaml"), "--get", "nope")[0] == 2
    assert "nope: no such field" in capsys.readouterr().err
    assert _run("profile", "--json-schema")[0] == 2
    assert "--json-schema goes with --schema" in capsys.readouterr().err
    assert _run("profile", str(ROOT / "clusters" / "gb300.yaml"), "--get", "partiton")[0] == 2
    assert "partiton: no such field (did you mean 'partition'?)" in capsys.readouterr().err


def test_a_profile_with_site_placeholders_is_a_template_not_a_valid_profile() -> None:
    rc, text = _run("profile", str(ROOT / "clusters" / "gb300.yaml"))
    assert rc == 1 and "is a template: 4 SITE value(s) to replace" in text
    assert text.rstrip().endswith("account, partition, container.image_cache_dir, driver.python")
    assert _run("profile", str(ROOT / "clusters" / "local-ci.yaml"))[0] == 0
