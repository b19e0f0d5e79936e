#!/usr/bin/env bash
# sglang-cpu-setup.sh -- install the real-SGLang CPU tier: sglang 0.5.23 on its plain-torch CPU path.
#
# Builds, outside the repository, a venv with sglang==0.5.23 from PyPI and its pinned torch 2.14.1 /
# torchvision 0.29.1, sglang-router 0.3.2 (a deployment's router runs with its workers' interpreter, as in the
# lmsysorg/sglang images), the harness's own import-only `sgl_kernel` stand-in (tools/sglang_cpu/sgl_kernel: SGLang's
# CPU kernel package is not on PyPI; the stand-in registers nothing and any kernel call raises an error naming
# the kernel), and a tiny random-weight Llama with a locally trained ChatML tokenizer
# (tools/sglang_cpu/tiny_model.py). It also unpacks the sglang 0.5.20 wheel (not installable beside 0.5.23: it
# pins torch 2.13.0) so tests can import its argument parser and resolution hooks.
#
# Usage:  sglang-cpu-setup.sh [install|env|check]     (default: install)
#   install  idempotent: a stamp records what was installed; re-running with the same inputs does nothing.
#            Links <repo>/.cache/sglang-cpu (git-ignored) to HARNESS_SGLANG_HOME: the shipped recipe's model path.
#   env      print the shell exports the tests and the shipped recipe use (eval "$(... env)").
#   check    start nothing; exit 0 when the tier is installed and complete.
#
# Knobs (environment):
#   HARNESS_SGLANG_HOME=$HOME/.cache/harness/sglang-cpu   where the venv, the model and the wheels go
#   HARNESS_SGLANG_PYTHON=python3.11                      interpreter for the venv (the wheels are cp311)
set -euo pipefail

ACTION=${1:-install}
HERE=$(cd "$(dirname "$0")" && pwd)
HOME_DIR=${HARNESS_SGLANG_HOME:-${HOME:-/root}/.cache/harness/sglang-cpu}
PY=${HARNESS_SGLANG_PYTHON:-python3.11}
VENV=$HOME_DIR/venv
MODEL=$HOME_DIR/tiny-llama
WHEELS=$HOME_DIR/wheels
SGLANG=0.5.23
TORCH=2.14.1
TORCHVISION=0.29.1
OLD=0.5.20
ROUTER=0.3.2   # sglang-router, as the lmsysorg/sglang images ship it beside SGLang (deployments' router)
# sglang's Requires-Dist entries that are CUDA-only or unneeded on the CPU path.
SKIP="apache-tvm-ffi cuda-python deepseek-recipe flash-attn-4 flashinfer_python humming-kernels kernels
nvidia-cutlass-dsl nvidia-mathdx nvidia-ml-py nvshmem4py-cu13 quack-kernels sgl-deep-ep sgl-deep-gemm sgl-flash-mla
sglang-kernel tilelang torch_memory_saver torchaudio torchcodec av decord2 torch torchvision"
T0=$(date +%s)

log() { printf '[sglang-cpu %4ss] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

stamp_inputs() {
  { echo "$SGLANG $TORCH $TORCHVISION $OLD $ROUTER $PY"; cat "$HERE/sglang_cpu/sgl_kernel/__init__.py" \
      "$HERE/sglang_cpu/tiny_model.py" "$0"; } | sha1sum | cut -c1-16
}
STAMP=$HOME_DIR/.installed-$(stamp_inputs)

print_env() {
  echo "export HARNESS_SGLANG_HOME=$HOME_DIR"
  echo "export HARNESS_SGLANG_VENV=$VENV"
  echo "export HARNESS_SGLANG_MODEL=$MODEL"
  echo "export HARNESS_SGLANG_WHEELS=$WHEELS"
}

requirements() {  # sglang's own dependency list for this platform, minus SKIP
  local wheel=$1
  "$VENV/bin/python" - "$wheel" $SKIP <<'PY'
import re, sys, zipfile
from packaging.markers import default_environment
from packaging.requirements import Requirement
wheel, skip = sys.argv[1], {s.lower().replace("_", "-") for s in sys.argv[2:]}
with zipfile.ZipFile(wheel) as z:
    meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
    lines = z.read(meta).decode().splitlines()
env = default_environment()
for line in lines:
    if not line.startswith("Requires-Dist:"):
        continue
    req = Requirement(line.split(":", 1)[1].strip())
    if req.name.lower().replace("_", "-") in skip:
        continue
    if req.marker is not None and not req.marker.evaluate({**env, "extra": ""}):
        continue
    print(f"{req.name}{''.join('[' + e + ']' for e in sorted(req.extras)[:0])}{req.specifier}")
PY
}

link_repo() {  # the shipped recipe names the model relative to the repository: .cache/sglang-cpu/tiny-llama
  mkdir -p "$HERE/../.cache"
  ln -sfn "$HOME_DIR" "$HERE/../.cache/sglang-cpu"
}

install() {
  if [ -e "$STAMP" ]; then link_repo; log "already installed ($VENV, $MODEL)"; return 0; fi
  command -v "$PY" >/dev/null || die "$PY not found: the sglang $SGLANG wheel is cp311 (set HARNESS_SGLANG_PYTHON)"
  mkdir -p "$HOME_DIR" "$WHEELS"
  rm -f "$HOME_DIR"/.installed-*
  [ -x "$VENV/bin/python" ] || { log "venv $VENV"; "$PY" -m venv "$VENV"; }
  "$VENV/bin/python" -m pip install -q --upgrade pip packaging
  log "torch $TORCH + torchvision $TORCHVISION"
  "$VENV/bin/python" -m pip install -q "torch==$TORCH" "torchvision==$TORCHVISION"
  for v in "$SGLANG" "$OLD"; do
    ls "$WHEELS"/sglang-"$v"-*.whl >/dev/null 2>&1 \
      || "$VENV/bin/python" -m pip download -q --no-deps "sglang==$v" -d "$WHEELS"
  done
  local wheel
  wheel=$(ls "$WHEELS"/sglang-"$SGLANG"-*.whl | head -1)
  log "sglang's dependencies (CUDA-only ones left out)"
  requirements "$wheel" > "$HOME_DIR/requirements.txt"
  echo "torch==$TORCH" > "$HOME_DIR/constraints.txt"
  echo "torchvision==$TORCHVISION" >> "$HOME_DIR/constraints.txt"
  "$VENV/bin/python" -m pip install -q -r "$HOME_DIR/requirements.txt" -c "$HOME_DIR/constraints.txt"
  log "sglang $SGLANG (--no-deps)"
  "$VENV/bin/python" -m pip install -q --no-deps "$wheel"
  log "sglang-router $ROUTER"
  "$VENV/bin/python" -m pip install -q "sglang-router==$ROUTER"
  log "sgl_kernel import-only stand-in"
  local site
  site=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  rm -rf "$site/sgl_kernel"
  cp -r "$HERE/sglang_cpu/sgl_kernel" "$site/sgl_kernel"
  rm -rf "$site/sgl_kernel/__pycache__"
  for v in "$SGLANG" "$OLD"; do
    if [ ! -f "$WHEELS/$v/sglang/srt/server_args.py" ]; then
      rm -rf "$WHEELS/$v"
      "$VENV/bin/python" -m zipfile -e "$(ls "$WHEELS"/sglang-"$v"-*.whl | head -1)" "$WHEELS/$v"
    fi
  done
  log "tiny model"
  rm -rf "$MODEL"
  "$VENV/bin/python" "$HERE/sglang_cpu/tiny_model.py" "$MODEL" >/dev/null
  "$VENV/bin/python" -c "import sglang, sgl_kernel, torch; assert sgl_kernel.STAND_IN; print('sglang', sglang.__version__, 'torch', torch.__version__)" >&2
  touch "$STAMP"
  link_repo
  log "installed in $(( $(date +%s) - T0 ))s: $VENV ($(du -sh "$VENV" | cut -f1)), $MODEL"
}

case "$ACTION" in
  install) install; print_env ;;
  env) print_env ;;
  check) [ -e "$STAMP" ] ;;
  *) die "unknown action $ACTION (install|env|check)" ;;
esac
