#!/usr/bin/env bash
# sim-image.sh -- build the local simulator image `harness-sim:local` (no registry needed).
#
#   bash tools/sim-image.sh            build, or say it is up to date
#   bash tools/sim-image.sh --force    rebuild even when up to date
#   bash tools/sim-image.sh --hash     print the project hash the image would carry, nothing else
#
# Two images, both kept by the docker daemon between runs:
#   harness-bookworm:local  Debian bookworm (minbase + python3, python3-venv), from a `debootstrap` root filesystem
#                           turned into an image with `docker import`; made once, reused after.
#   harness-sim:local       FROM it: the harness's wheel (`pip wheel --no-deps .`) and the simulator's dependencies
#                           (aiohttp, pydantic, pyyaml at the versions the harness's venv holds), installed from
#                           wheels fetched on this host; `ENV SGLANG_SIMULATE_ACC_LEN=1.0` as an engine image may
#                           set one; labels io.harness.simulator=1 and io.harness.project-hash=<hash>.
# The project hash covers every file that goes into the wheel, the Dockerfile and this script: an image with the same
# hash is not rebuilt. Needs a running docker daemon; debootstrap (Debian package) the first time.
#
# Knobs: SIM_IMAGE (harness-sim:local), SIM_BASE_IMAGE (harness-bookworm:local), DEBIAN_MIRROR
# (http://deb.debian.org/debian), PYTHON (the interpreter whose pip fetches wheels: .venv/bin/python, else python3).
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=${SIM_IMAGE:-harness-sim:local}
BASE=${SIM_BASE_IMAGE:-harness-bookworm:local}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
PY=${PYTHON:-}
[ -n "$PY" ] || { [ -x .venv/bin/python ] && PY=.venv/bin/python || PY=python3; }
SIM_DEPS=(aiohttp pydantic pyyaml)   # what `python -m harness.sim` imports beyond the standard library
T0=$(date +%s)

log() { printf '[sim-image %4ss] %s\n' "$(( $(date +%s) - T0 ))" "$*" >&2; }
die() { printf 'sim-image: error: %s\n' "$*" >&2; exit 1; }

project_hash() {
  { git ls-files -co --exclude-standard -- pyproject.toml README.md harness launchers slurm golden_al_distribution \
      containers/sim tools/sim-image.sh | LC_ALL=C sort | while read -r f; do
        [ -f "$f" ] && printf '%s\0' "$f" && sha256sum < "$f"
      done; } | sha256sum | cut -c1-16
}

if [ "${1:-}" = --hash ]; then project_hash; exit 0; fi
FORCE=0
case "${1:-}" in --force) FORCE=1 ;; "") ;; *) die "unknown argument ${1} (use --force or --hash)" ;; esac

docker info >/dev/null 2>&1 || die "docker does not answer (is dockerd running? try: dockerd >/tmp/dockerd.log 2>&1 &)"
"$PY" -m pip --version >/dev/null 2>&1 || die "$PY has no pip to build the harness's wheel (run make setup first, or set PYTHON)"
HASH=$(project_hash)
have=$(docker image inspect --format '{{index .Config.Labels "io.harness.project-hash"}}' "$IMAGE" 2>/dev/null || true)
if [ "$FORCE" = 0 ] && [ "$have" = "$HASH" ]; then
  log "$IMAGE is up to date (project hash $HASH)"
  exit 0
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sim-image.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

if ! docker image inspect "$BASE" >/dev/null 2>&1; then
  command -v debootstrap >/dev/null || die "debootstrap is not installed (Debian: apt-get install debootstrap)"
  [ "$(id -u)" = 0 ] || die "debootstrap needs root to build $BASE"
  log "debootstrap bookworm (minbase + python3) from $MIRROR"
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$WORK/rootfs" "$MIRROR" \
    >"$WORK/debootstrap.log" 2>&1 || { tail -20 "$WORK/debootstrap.log" >&2; die "debootstrap failed"; }
  rm -rf "$WORK/rootfs/var/cache/apt/archives/"*.deb "$WORK/rootfs/var/lib/apt/lists/"*
  tar -C "$WORK/rootfs" -c . | docker import --change 'CMD ["/bin/bash"]' - "$BASE" >/dev/null
  rm -rf "$WORK/rootfs"
  log "imported $BASE"
fi

log "building the harness wheel and fetching the simulator's dependencies"
mkdir -p "$WORK/ctx/wheels"
"$PY" -m pip wheel --quiet --no-deps --wheel-dir "$WORK/ctx/wheels" . >"$WORK/wheel.log" 2>&1 \
  || { tail -20 "$WORK/wheel.log" >&2; die "pip wheel of the project failed"; }
"$PY" - "${SIM_DEPS[@]}" >"$WORK/ctx/requirements.txt" <<'PYEOF'
import sys
from importlib import metadata

for name in sys.argv[1:]:
    try:
        print(f"{name}=={metadata.version(name)}")
    except metadata.PackageNotFoundError:
        print(name)
PYEOF
"$PY" -m pip download --quiet --only-binary=:all: --dest "$WORK/ctx/wheels" -r "$WORK/ctx/requirements.txt" \
  >"$WORK/download.log" 2>&1 || { tail -20 "$WORK/download.log" >&2; die "pip download of the simulator's dependencies failed"; }
cp containers/sim/Dockerfile "$WORK/ctx/Dockerfile"

log "docker build $IMAGE (project hash $HASH)"
docker build --quiet --network host --build-arg "BASE=$BASE" --build-arg "PROJECT_HASH=$HASH" -t "$IMAGE" "$WORK/ctx" \
  >"$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log" >&2; die "docker build failed"; }
docker image prune -f --filter "label=io.harness.simulator=1" >/dev/null 2>&1 || true   # the untagged earlier builds
log "built $IMAGE ($(docker image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1e6}'))"
