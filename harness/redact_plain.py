"""Settings whose values are recorded as written: the allow-list (`harness.redact` applies it).

A list of secret shapes cannot keep up with every service's tokens, and a neutral name (`MY_SETTING`) says nothing
about its value. So a value of an environment or a server argument is written or printed in plain text only
when its name is known not to hold a secret:

- **Environment variables** named in `PLAIN_ENV` (the documented list in `docs/secrets.md`: device selection,
  NCCL's and PyTorch's tuning knobs, Hugging Face's offline and cache switches, the SGLang variables the shipped
  recipes set, the harness's own knobs) or starting with `SGLANG_SIMULATE_ACC_` (the golden acceptance the
  harness injects).
- **Server arguments** that are SGLang's flags by its flag tables (`harness/recipe/server_flags/flag_tables/*.json`, every
  shipped version) or the simulator's `sim-*` flags.

Every other value is recorded as its name and `setting_hash(value)`: `sha256:` and the first 16 hex digits of
SHA-256 over a fixed salt and the value. The salt is the same everywhere, so two runs with the same value show the
same hash and two values show two (enough to tell runs apart); the hash is no key to the value of a secret worth
the name. A plain value still passes the shape scan (`Bearer ...`, `glpat-...`): the allow-list is the first line,
the shapes the second. Secret names (`HF_TOKEN`, `--api-key`) are masked as before, never hashed.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache
from pathlib import Path

HASH_PREFIX = "sha256:"
HASH_DIGITS = 16
HASH_SALT = b"agentic-bench-harness setting hash v1\0"
SETTING_HASH = re.compile(r"sha256:[0-9a-f]{16}(?![0-9a-f])")

# The environment variables recorded in plain text (see docs/secrets.md). Names only: a prefix would let a
# neutral name through.
PLAIN_ENV = frozenset({
    # devices
    "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_LAUNCH_BLOCKING", "CUDA_DEVICE_MAX_CONNECTIONS",
    "CUDA_MODULE_LOADING", "CUDA_VERSION", "CUDA_HOME", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
    "OMP_NUM_THREADS",
    # NCCL
    "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_IB_DISABLE", "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_SHM_DISABLE",
    "NCCL_NVLS_ENABLE", "NCCL_CUMEM_ENABLE", "NCCL_ALGO", "NCCL_PROTO", "NCCL_SOCKET_IFNAME", "NCCL_IB_HCA",
    "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_BUFFSIZE", "NCCL_NET_GDR_LEVEL", "NCCL_VERSION",
    # PyTorch
    "PYTORCH_CUDA_ALLOC_CONF", "TORCH_CUDA_ARCH_LIST", "TORCH_NCCL_ASYNC_ERROR_HANDLING",
    "TORCH_NCCL_AVOID_RECORD_STREAMS",
    # Hugging Face
    "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_ENABLE_HF_TRANSFER", "HF_HOME",
    "HF_HUB_CACHE", "HF_DATASETS_CACHE", "TOKENIZERS_PARALLELISM",
    # SGLang variables the shipped recipes and docs set
    "SGLANG_TIMEOUT_KEEP_ALIVE", "SGLANG_USE_CPU_ENGINE", "SGLANG_FLASHINFER_NVFP4_PER_TOKEN_ACTIVATION",
    "SGLANG_OPT_UNIFIED_CACHE_FREE_OUT_OF_WINDOW_SLOTS", "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE",
    "SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION", "SGLANG_DISAGGREGATION_WAITING_TIMEOUT",
    "SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT",
    # the harness's own knobs
    "HARNESS_SIM_SGLANG_VERSION", "HARNESS_SIM_NODE_JOIN_TIMEOUT", "HARNESS_PROGRESS", "HARNESS_PHASES",
    "HARNESS_GIT_COMMIT",
})
PLAIN_ENV_PREFIXES = ("SGLANG_SIMULATE_ACC_",)
TABLE_DIR = Path(__file__).resolve().parent / "recipe" / "server_flags" / "flag_tables"   # data, read as files (no import)


def is_plain_env(name: str) -> bool:
    """True when an environment variable of this name is recorded in plain text (the list above)."""
    return name in PLAIN_ENV or name.startswith(PLAIN_ENV_PREFIXES)


@cache
def _table_names() -> frozenset[str]:
    """Every flag of every shipped SGLang flag table, as `dest` (`max_running_requests`)."""
    names: set[str] = set()
    for path in sorted(TABLE_DIR.glob("*.json")):
        options = json.loads(path.read_text()).get("options", {})
        for key, option in options.items():
            names.add(key.split("#")[0])
            names.update(_dest(f) for f in option.get("flags", ()))
    return frozenset(names)


def _dest(name: str) -> str:
    return name.lstrip("-").replace("-", "_")


def is_plain_arg(name: str) -> bool:
    """True when a server argument of this name (`max-running-requests`, `--tp-size`, `sim-profile`) is one of
    SGLang's flags by its tables or one of the simulator's `sim-*` flags."""
    dest = _dest(name)
    return dest in _table_names() or dest.startswith("sim_")


def setting_hash(value: str) -> str:
    """`sha256:<16 hex digits>` of the fixed salt and `value`: how a value outside the allow-list is recorded."""
    return HASH_PREFIX + hashlib.sha256(HASH_SALT + value.encode()).hexdigest()[:HASH_DIGITS]


def override_outside_allow_list(key: str) -> bool:
    """A `--set` key of an environment variable or server argument whose value is not recorded in plain text:
    `server.env.MY_SETTING`, `points.c4.env.X`, `args.not-a-flag` (a key of another setting is the harness's own)."""
    parts = key.split(".")
    if len(parts) < 2 or parts[-2] not in ("env", "args", "sim_args"):
        return False
    return not (is_plain_env(parts[-1]) if parts[-2] == "env" else is_plain_arg(parts[-1]))
