"""Cluster profiles (`clusters/*.yaml`): where and how a sweep's job array runs on one cluster.

A profile is strict (unknown keys are errors) and holds only site facts: account, partition, QOS, time
limit, GPUs per node, the hosts' CPU architecture, the container runtime and its image cache directory,
where models are staged on the nodes, default container mounts and extra sbatch directives.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from harness.errors import UserError
from harness.inputs.input_errors import first_error
from harness.inputs.yaml_input import Where, load_yaml_file, short
from harness.recipe.schema import Pricing
from harness.redact import add_secret_names

TIME_LIMIT = re.compile(r"^(\d{1,3}-)?\d{1,5}(:\d{2}){0,2}$")
RUNTIME_LAUNCHER = {"pyxis": "pyxis", "enroot": "enroot", "apptainer": "apptainer", "docker": "docker",
                    "none": "local"}


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Container(Strict):
    runtime: Literal["pyxis", "enroot", "apptainer", "docker", "none"] = Field(
        description="how the server starts on the node: `pyxis` (srun --container-image), `enroot`, `apptainer`, "
                    "`docker`, or `none` to run it on the host (the simulator, or an engine installed there)",
        examples=["pyxis"])
    image_cache_dir: str | None = Field(
        None, description="shared directory of imported images (.sqsh for pyxis/enroot, .sif for apptainer), one "
                          "subdirectory per CPU architecture (`<dir>/<cpu_arch>/`); each array task imports the "
                          "recipe's image there under a lock if it is missing. Unset: the image reference is handed "
                          "to the runtime as is",
        examples=["/lustre/bench/harness/images"])
    mount_roots: list[str] = Field(
        default_factory=list, description="directories under which the site lets containers bind host paths "
                                          "(its shared filesystems); preflight fails a default mount outside them "
                                          "(`mount_root`). Empty: not checked",
        examples=[["/lustre", "/scratch"]])

    @field_validator("mount_roots")
    @classmethod
    def _roots(cls, v: list[str]) -> list[str]:
        for root in v:
            if not root.startswith("/"):
                raise ValueError(f"{root!r}: expected an absolute directory")
        return v


class Driver(Strict):
    python: str | None = Field(
        None, description="Python interpreter with the harness installed, as the compute nodes see it: a venv on "
                          "shared storage built on a host of `cpu_arch` (`harness submit --python` and `harness "
                          "preflight --python` override it); default: the interpreter that runs `harness submit`",
        examples=["/lustre/bench/harness/venv-aarch64/bin/python"])


class HostDram(Strict):
    gb: int = Field(ge=1, description="CPU DRAM of one server (node) as the system is built, in GB (10^9 bytes, "
                                      "the unit of SGLang's `--hicache-size`)", examples=[2000])
    system: Literal["hgx", "nvl72"] = Field(
        description="`hgx`: an HGX-class server (also MI355X), whose KV-offload DRAM is capped at 3 TB; `nvl72`: a "
                    "rack-scale NVL72 system (GB200, GB300), whose cap is its standard DRAM", examples=["hgx"])


class ClusterProfile(Strict):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$",
                      description="short name of the cluster, recorded with every submitted job",
                      examples=["gb300"])
    description: str = Field("", description="one line for humans: what this cluster is",
                             examples=["GB300 NVL72 partition, one point per node"])
    gpu: str = Field(description="GPU type label recipes name in `hardware.gpu` (`gb300`, `h200`, `sim`); a recipe "
                                 "for another GPU type is refused", examples=["gb300"])
    gpus_per_node: int = Field(ge=1, description="GPUs of one compute node; a recipe's `hardware.gpus_per_node` must "
                                                 "match", examples=[4])
    cpu_arch: Literal["aarch64", "x86_64"] = Field(
        description="CPU architecture of the compute hosts (`uname -m`): preflight checks the partition's nodes "
                    "against it, and the image cache keeps one subdirectory per architecture",
        examples=["aarch64"])
    host_dram: HostDram | None = Field(
        None, description="the nodes' CPU DRAM, for InferenceX's KV-offload cap (`harness check --cluster`): DRAM "
                          "for HiCache may be at most this DRAM times the share of the node's GPUs a point uses "
                          "(and 3 TB on an HGX server); unset: only the 3 TB cap is checked",
        examples=[{"gb": 960, "system": "nvl72"}])
    pricing: Pricing | None = Field(
        None, description="what a GPU-hour (and a kWh) of this cluster costs: the cost of every point submitted to it "
                          "when its recipe names no `pricing:` (docs/reports.md, goodput and cost)",
        examples=[{"gpu_hour": 3.0, "currency": "USD", "energy_kwh": 0.12}])
    account: str | None = Field(None, description="Slurm account (`--account`); unset: the user's default",
                                examples=["bench-team"])
    partition: str | None = Field(None, description="Slurm partition (`--partition`); unset: the cluster's default",
                                  examples=["gb300"])
    qos: str | None = Field(None, description="Slurm quality of service (`--qos`); unset: the user's default",
                            examples=["normal"])
    time_limit: str = Field("02:00:00", description="wall time of one array task (one point), `--time`: minutes, "
                                                    "MM:SS, HH:MM:SS or D-HH:MM:SS; preflight checks it covers the "
                                                    "ready timeout, warmup, window, grace and teardown",
                            examples=["02:30:00"])
    signal_margin_s: int = Field(300, ge=10, description="seconds before the time limit at which Slurm sends the "
                                                         "task SIGUSR1 (`--signal=B:USR1@N`): the point stops its "
                                                         "server, writes its artifacts and marks itself cancelled "
                                                         "before the walltime kill", examples=[300])
    exclusive: bool = Field(True, description="`--exclusive`: one point per node; turn off where array tasks share "
                                              "a node (`gpus_per_task` below `gpus_per_node`)", examples=[True])
    gpus_per_task: int | None = Field(None, ge=1, description="GPUs given to one array task (one point); unset: "
                                                              "`gpus_per_node`. A point's tp×pp must fit",
                                      examples=[4])
    gpu_directive: Literal["gres", "gpus-per-node"] = Field(
        "gres", description="how the GPUs are requested: `gres` writes `--gres=gpu:N`, `gpus-per-node` writes "
                            "`--gpus-per-node=N` (for sites that configure GPUs through the newer option)",
        examples=["gres"])
    max_parallel: int | None = Field(None, ge=1, description="default throttle of the job array (`--array=0-N%M`): "
                                                             "at most this many points run at once; `harness submit "
                                                             "--throttle` overrides it; unset: no throttle. Also the "
                                                             "number of concurrencies per round of `harness search "
                                                             "--cluster` (unless `--round-size`)",
                                     examples=[8])
    container: Container = Field(description="the container runtime and its image cache")
    model_staging: dict[str, str] = Field(default_factory=dict,
                                          description="checkpoint as a recipe names it (HF id or path) -> staged copy "
                                                      "as the server sees it; the server's `--model-path` and draft "
                                                      "path are rewritten to it",
                                          examples=[{"RadixArk/Muse-Spark-Open-816B-A42B-NVFP4":
                                                     "/scratch/models/Muse-Spark-Open-816B-A42B-NVFP4"}])
    hf_cache: str | None = Field(None, description="staged Hugging Face hub cache as the server sees it (mount it "
                                                   "with default_mounts); checkpoints not in model_staging are "
                                                   "read from it offline (HF_HUB_CACHE, HF_HUB_OFFLINE=1)",
                                 examples=["/hf-hub"])
    corpus_cache: str | None = Field(None, description="datasets cache on shared storage holding the staged pinned "
                                                       "AgentX corpus (`harness traces stage ... --to DIR`); AIPerf "
                                                       "reads it offline (HF_DATASETS_CACHE)",
                                     examples=["/lustre/bench/corpora"])
    default_mounts: list[str] = Field(default_factory=list, description="container mounts of every point, "
                                                                        "HOST:CONTAINER[:FLAGS]",
                                      examples=[["/scratch/models:/scratch/models"]])
    sbatch_directives: list[str] = Field(default_factory=list, description="extra sbatch options, each one "
                                                                           "`--option[=value]`",
                                         examples=[["--segment=1"]])
    driver: Driver = Field(default_factory=lambda: Driver(python=None),
                           description="how the compute nodes run the harness itself")
    secret_names: list[str] = Field(default_factory=list, description=(
        "more environment variables or server arguments whose values are secrets on this cluster (redacted)"),
        examples=[["LUSTRE_TICKET"]])

    @field_validator("time_limit")
    @classmethod
    def _time(cls, v: str) -> str:
        check_time_limit(v)
        return v

    @field_validator("sbatch_directives")
    @classmethod
    def _directives(cls, v: list[str]) -> list[str]:
        for d in v:
            if not d.startswith("--") or any(c in d for c in "\n\r\0"):
                raise ValueError(f"{d!r}: write each directive as one --option[=value]")
        return v

    @field_validator("default_mounts")
    @classmethod
    def _mounts(cls, v: list[str]) -> list[str]:
        for m in v:
            if m.count(":") not in (1, 2) or "," in m:
                raise ValueError(f"{m!r}: expected HOST:CONTAINER[:FLAGS]")
        return v

    @model_validator(mode="after")
    def _gpus(self) -> ClusterProfile:
        if self.gpus_per_task is not None and self.gpus_per_task > self.gpus_per_node:
            raise ValueError(f"gpus_per_task {self.gpus_per_task} > gpus_per_node {self.gpus_per_node}")
        return self

    @property
    def launcher(self) -> str:
        return RUNTIME_LAUNCHER[self.container.runtime]

    @property
    def task_gpus(self) -> int:
        return self.gpus_per_task or self.gpus_per_node


def parse_profile(data: object, source: str, lines: dict[tuple[str, ...], int] | None = None) -> ClusterProfile:
    if not isinstance(data, dict):
        raise UserError(f"{source}: <root>: a cluster profile is a mapping of keys")
    try:
        profile = ClusterProfile.model_validate(data)
    except ValidationError as exc:
        raise Where(source, lines).error(*first_error(exc, ClusterProfile)) from None
    add_secret_names(profile.secret_names)  # before anything of the profile is written or printed
    return profile


def load_profile(path: str | Path) -> ClusterProfile:
    path = Path(path)
    if not path.exists():
        raise UserError(f"{path}: no such cluster profile (see clusters/*.yaml)")
    data, lines = load_yaml_file(path, "cluster profile")
    return parse_profile(data, str(path), lines)


def driver_python(profile: ClusterProfile, python: str | None = None) -> str:
    """The interpreter the compute nodes run the harness with: `python` (the command line's `--python`), else the
    profile's `driver.python`, else the one running this process. Preflight checks the same one."""
    import sys

    return python or profile.driver.python or sys.executable


def check_time_limit(text: str) -> None:
    """Raise ValueError unless `text` is one of Slurm's --time formats with minutes and seconds below 60
    (and hours below 24 after a day count): `99:99:99` is a typo, not a time."""
    message = f"{short(text)}: expected minutes, MM:SS, HH:MM:SS or D-HH:MM:SS"
    if not TIME_LIMIT.match(text):
        raise ValueError(message)
    days, _, clock = text.rpartition("-")
    parts = [int(p) for p in clock.split(":")]
    if days and len(parts) >= 1 and parts[0] > 23:
        raise ValueError(message + " (hours below 24 after a day count)")
    if len(parts) >= 2 and any(p > 59 for p in parts[1:]):
        raise ValueError(message + " (minutes and seconds below 60)")
    if time_limit_seconds(text) == 0:
        raise ValueError(message + " (longer than zero)")


def time_limit_seconds(text: str) -> int:
    """Slurm's --time formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S."""
    days = 0
    if "-" in text:
        d, text = text.split("-", 1)
        days = int(d)
        parts = [int(p) for p in text.split(":")]
        h, m, s = (parts + [0, 0])[:3]
        return days * 86400 + h * 3600 + m * 60 + s
    parts = [int(p) for p in text.split(":")]
    if len(parts) == 1:
        return parts[0] * 60
    if len(parts) == 2:
        return parts[0] * 60 + parts[1]
    return parts[0] * 3600 + parts[1] * 60 + parts[2]
