"""The pinned AgentX corpus, named as AIPerf names it, and its staged copy in a Hugging Face datasets cache.

A recipe names the corpus AIPerf's `inferencex-agentx-mvp` scenario accepts for a submission in one of two
spellings, each a commit-pinned revision of the Hugging Face dataset behind it:

    public-dataset:semianalysis_cc_traces_weka_062126@23f152f6f0f9399a85901b89a6458def0ef16729
    hf-weka-dataset:semianalysisai/cc-traces-weka-062126@23f152f6f0f9399a85901b89a6458def0ef16729

The harness passes `--public-dataset ALIAS` (or `--hf-weka-dataset REPO`) to AIPerf, which loads the dataset with
the `datasets` library. Compute nodes rarely reach the internet, so the dataset is staged once where it is
reachable (`harness traces stage`) into a datasets cache on shared storage, and AIPerf runs offline against it
(`HF_DATASETS_CACHE=<cache>`, `HF_HUB_OFFLINE=1`). Offline, `datasets` serves the most recent cached build of
the repository, `<cache>/<owner>___<name>/default/0.0.0/<commit>/`; `check_staged` makes sure the only one there
is the pinned commit.

A staged copy is either downloaded from the hub at the pinned commit (verified), or built from a local copy of
the dataset's file: verified when its sha256 matches the digest recorded for that commit in `pinned.yaml`,
otherwise marked unverified (a stand-in, e.g. synthetic traces for tests), which makes every result replayed
from it unpublishable.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.artifacts import write_json
from harness.errors import UserError

PUBLIC_FLAG, HF_WEKA_FLAG = "public-dataset", "hf-weka-dataset"
_SPEC = re.compile(r"^(?P<flag>public-dataset|hf-weka-dataset):(?P<name>[\w./-]+)@(?P<rev>[0-9a-f]{40})$")
MARKER_SUFFIX = ".harness-staged.json"   # beside the cached build: where the staged copy came from
CONFIG_DIR = "default"                    # `datasets`' config of a single-file hub dataset
VERSION_DIR = "0.0.0"


def is_pinned_spec(spec: str) -> bool:
    """Whether a `client.traces` value names a pinned AIPerf corpus (rather than a local corpus)."""
    return spec.startswith((PUBLIC_FLAG + ":", HF_WEKA_FLAG + ":"))


@dataclass(frozen=True)
class PinnedCorpus:
    flag: str            # public-dataset | hf-weka-dataset (AIPerf's flag, without dashes)
    name: str            # the public-dataset alias, or the repository for hf-weka-dataset
    repo: str            # the Hugging Face dataset repository behind it
    revision: str        # the full commit hash

    @property
    def spec(self) -> str:
        return f"{self.flag}:{self.name}@{self.revision}"

    def aiperf_args(self) -> list[str]:
        """The dataset flags of `aiperf profile`."""
        return [f"--{self.flag}", self.name]

    def provenance(self) -> dict[str, Any]:
        return {"flag": f"--{self.flag}", "name": self.name, "hf_dataset_name": self.repo, "revision": self.revision}


def parse_spec(spec: str) -> PinnedCorpus:
    """`public-dataset:ALIAS@COMMIT` or `hf-weka-dataset:OWNER/NAME@COMMIT` -> PinnedCorpus (one-line UserError)."""
    m = _SPEC.match(spec)
    if not m:
        raise UserError(f"{spec}: expected public-dataset:ALIAS@COMMIT or hf-weka-dataset:OWNER/NAME@COMMIT "
                        "(COMMIT: the dataset's full 40-hex commit hash)")
    flag, name, rev = m.group("flag"), m.group("name"), m.group("rev")
    if flag == HF_WEKA_FLAG:
        if name.count("/") != 1:
            raise UserError(f"{spec}: hf-weka-dataset takes a repository OWNER/NAME")
        return PinnedCorpus(flag, name, name, rev)
    return PinnedCorpus(flag, name, _alias_repo(name, spec), rev)


def _alias_repo(alias: str, spec: str) -> str:
    """The dataset repository behind an AIPerf public-dataset alias, from AIPerf's own plugin registry."""
    from aiperf.plugin import plugins

    try:
        repo = plugins.get_public_dataset_loader_metadata(alias).hf_dataset_name
    except Exception:  # AIPerf raises its own lookup errors for an unknown alias
        repo = None
    if not repo:
        raise UserError(f"{spec}: {alias!r} is not a Hugging Face public dataset of the pinned AIPerf "
                        "(see `aiperf plugins` for the semianalysis_cc_traces_weka_* aliases)")
    return str(repo)


# --- the staged copy ---------------------------------------------------------------------------------------

def repo_root(cache: Path, repo: str) -> Path:
    """`<cache>/<owner>___<name>`: where `datasets` keeps its builds of a hub repository."""
    from datasets.naming import camelcase_to_snakecase

    owner, name = repo.split("/")
    return cache / f"{owner}___{camelcase_to_snakecase(name)}"


def build_dir(cache: Path, corpus: PinnedCorpus) -> Path:
    return repo_root(cache, corpus.repo) / CONFIG_DIR / VERSION_DIR / corpus.revision


def marker_path(cache: Path, corpus: PinnedCorpus) -> Path:
    return repo_root(cache, corpus.repo) / f"{corpus.revision}{MARKER_SUFFIX}"


@dataclass(frozen=True)
class Staged:
    ok: bool
    message: str                 # one line: what is there, or what is wrong and the fix
    verified: bool = False       # the content is the pinned corpus (downloaded, or its recorded digest)
    source: str | None = None


def default_cache() -> Path:
    """The datasets cache `datasets` itself uses: `HF_DATASETS_CACHE`, else `HF_HOME/datasets`."""
    import os

    if os.environ.get("HF_DATASETS_CACHE"):
        return Path(os.environ["HF_DATASETS_CACHE"])
    return Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface") / "datasets"


def check_staged(cache: Path, corpus: PinnedCorpus) -> Staged:
    """Whether `cache` holds the pinned corpus at its commit, and only that build of the repository."""
    fix = f"stage it where the internet is: harness traces stage {corpus.spec} --to {cache}"
    build = build_dir(cache, corpus)
    if not any(build.glob("*.arrow")):
        return Staged(False, f"{corpus.repo}@{corpus.revision[:12]} is not staged in {cache}; {fix}")
    root = repo_root(cache, corpus.repo)
    others = sorted(str(p.relative_to(root)) for p in root.glob("*/*/*") if p.is_dir() and p != build)
    if others:
        return Staged(False, f"{root} also holds {', '.join(others)}; offline, AIPerf would replay the newest "
                             f"build, not the pinned commit: remove them, or {fix}")
    mark = _read_marker(marker_path(cache, corpus))
    verified = bool(mark.get("verified"))
    source = str(mark.get("source") or "unknown source")
    what = "the pinned corpus" if verified else f"UNVERIFIED content ({source}): results replayed from it are " \
                                                "not publishable"
    return Staged(True, f"{corpus.repo}@{corpus.revision[:12]} staged in {cache}: {what}", verified, source)


def _read_marker(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def recorded_digest(corpus: PinnedCorpus) -> dict[str, Any] | None:
    """The file name, sha256, size and trace count recorded for this repository at this commit (pinned.yaml)."""
    import yaml

    table = yaml.safe_load((Path(__file__).parent / "pinned.yaml").read_text())
    entry = (table.get(corpus.repo) or {}).get(corpus.revision)
    return dict(entry) if isinstance(entry, dict) else None


def stage_from_hub(corpus: PinnedCorpus, cache: Path) -> Staged:
    """Download the dataset at its pinned commit and build it into `cache` (needs the hub)."""
    from datasets import load_dataset

    load_dataset(corpus.repo, split="train", revision=corpus.revision, cache_dir=str(cache))
    _write_marker(cache, corpus, verified=True, source=f"downloaded from the hub at {corpus.revision}")
    return check_staged(cache, corpus)


def stage_from_file(corpus: PinnedCorpus, cache: Path, data_file: Path, *, allow_unverified: bool) -> Staged:
    """Build the dataset into `cache` from a local copy of its JSON-lines file, as a hub download would.

    Verified when the file's sha256 is the one recorded for the pinned commit; anything else is refused unless
    `allow_unverified`, and is then marked unverified (results replayed from it are not publishable)."""
    digest = _sha256(data_file)
    recorded = recorded_digest(corpus)
    verified = recorded is not None and recorded.get("sha256") == digest
    if not verified and not allow_unverified:
        expected = f"sha256 {recorded['sha256']}" if recorded else "no recorded digest for this commit"
        raise UserError(f"{data_file}: sha256 {digest} is not the pinned corpus {corpus.repo}@{corpus.revision[:12]} "
                        f"({expected}); stage from the hub, or pass --unverified for a stand-in (never publishable)")
    _build_from_file(corpus, cache, data_file)
    _write_marker(cache, corpus, verified=verified,
                  source=f"{'' if verified else 'stand-in '}file {data_file.name} (sha256 {digest[:16]})")
    return check_staged(cache, corpus)


def _build_from_file(corpus: PinnedCorpus, cache: Path, data_file: Path) -> None:
    """`datasets`' JSON builder over the file, laid out where an offline `load_dataset(repo)` looks for it."""
    from datasets.packaged_modules.json.json import Json

    name = corpus.repo.split("/")[1]
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".stage-") as tmp:
        builder = Json(cache_dir=tmp, dataset_name=name, hash=corpus.revision,
                       data_files={"train": [str(data_file.resolve())]})
        builder.download_and_prepare()
        built = Path(builder.cache_dir)
        for lock in built.parent.glob("*.lock"):
            lock.unlink()
        target = build_dir(cache, corpus)
        if target.exists():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        built.rename(target)


def _write_marker(cache: Path, corpus: PinnedCorpus, *, verified: bool, source: str) -> None:
    write_json(marker_path(cache, corpus), {"schema_version": 1, "spec": corpus.spec, "repo": corpus.repo,
                                            "revision": corpus.revision, "verified": verified, "source": source})


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
