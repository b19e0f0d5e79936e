#!/usr/bin/env bash
# aarch64-check.sh -- install and run the harness on aarch64 (GB300's Grace hosts) from an x86_64 machine, under
# emulation: an arm64 Debian bookworm rootfs (debootstrap + qemu-user-static), the driver venv built in it the
# way the cluster path builds it on a node (`python3 -m venv V && V/bin/pip install SRC`: the same requirements
# and the pinned client), then `harness --version`, `harness plan` of the GB300 recipe and one streamed
# /v1/chat/completions request to the simulator (`harness sim`) started in the rootfs. Prints each step's time.
#
# Usage:  aarch64-check.sh [--docker]
#   --docker       also run containers/Dockerfile's install steps in a throwaway overlay of the rootfs
#                  (tools/aarch64_dockerfile.py translates them): the build stage's wheel build (crick compiles
#                  there) and the final stage's install from those wheels alone, with no compiler on PATH; then
#                  `harness --version` and `harness plan` of the GB300 recipe with what the final stage installed.
#   --docker-only  only the rootfs and the Dockerfile's steps
#
# Needs root (debootstrap, chroot, binfmt_misc) and the Debian packages debootstrap, qemu-user-static and
# binfmt-support (installed with apt-get when missing). The rootfs is made once and kept; pip's cache inside it
# keeps the wheel crick builds (about 7 minutes under emulation), so later runs install in a few minutes.
#
# Knobs (environment):
#   HARNESS_AARCH64_CACHE=$HOME/.cache/harness/aarch64   where the rootfs goes (about 1 GB)
#   HARNESS_AARCH64_MIRROR=http://deb.debian.org/debian  the Debian mirror debootstrap uses
#   HARNESS_AARCH64_PORT=30917                           the simulator's port (the rootfs shares this host's network)
#   HARNESS_AARCH64_CA_BUNDLE=$PIP_CERT or /etc/ssl/certs/ca-certificates.crt   CA bundle pip uses in the rootfs
set -euo pipefail

DOCKER=0
DRIVER=1
for arg in "$@"; do
  case $arg in
    --docker) DOCKER=1 ;;
    --docker-only) DOCKER=1; DRIVER=0 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "aarch64-check: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done

REPO=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tools/background.sh
source "$REPO/tools/background.sh"
CACHE=${HARNESS_AARCH64_CACHE:-${HOME:-/root}/.cache/harness/aarch64}
MIRROR=${HARNESS_AARCH64_MIRROR:-http://deb.debian.org/debian}
PORT=${HARNESS_AARCH64_PORT:-30917}
CA_BUNDLE=${HARNESS_AARCH64_CA_BUNDLE:-${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}}
ROOTFS=$CACHE/rootfs-bookworm
RECIPE=recipes/musespark-fp4-gb300-sglang-agentic-dflash.yaml
# The rootfs's packages: Python 3.11 with venv, and what crick's source build needs (gcc, the C library's and
# Python's headers); ca-certificates for pip.
PACKAGES=python3,python3-venv,python3-dev,gcc,libc6-dev,ca-certificates

T0=$(date +%s)
TIMES=()
CURRENT=""
step() {  # step NAME CMD...: run CMD (set -e applies inside), print and record its time
  CURRENT=$1; shift
  local t; t=$(date +%s)
  echo "== $CURRENT"
  "$@"
  local took=$(( $(date +%s) - t ))
  TIMES+=("$(printf '%5ss  %s' "$took" "$CURRENT")")
  echo "   ok in ${took}s"
  CURRENT=""
}

[ "$(id -u)" = 0 ] || { echo "aarch64-check: needs root (debootstrap, chroot, binfmt_misc)" >&2; exit 1; }

host_tools() {
  local need=()
  command -v debootstrap >/dev/null || need+=(debootstrap)
  command -v qemu-aarch64-static >/dev/null || need+=(qemu-user-static)
  command -v update-binfmts >/dev/null || need+=(binfmt-support)
  if [ ${#need[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
  # arm64 binaries run through qemu: binfmt_misc mounted and qemu-aarch64 registered (its F flag keeps the
  # interpreter open, so the rootfs needs no copy of it)
  if [ ! -e /proc/sys/fs/binfmt_misc/register ]; then mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc; fi
  if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then update-binfmts --enable qemu-aarch64; fi
  grep -qx enabled /proc/sys/fs/binfmt_misc/qemu-aarch64
}

make_rootfs() {
  if [ -e "$ROOTFS/.harness-ready" ]; then echo "   reusing $ROOTFS"; return 0; fi
  rm -rf "$ROOTFS.tmp"
  mkdir -p "$CACHE"
  debootstrap --arch=arm64 --variant=minbase --include="$PACKAGES" bookworm "$ROOTFS.tmp" "$MIRROR" \
    > "$CACHE/debootstrap.log" 2>&1 || { tail -20 "$CACHE/debootstrap.log" >&2; return 1; }
  rm -rf "$ROOTFS" && mv "$ROOTFS.tmp" "$ROOTFS"
  touch "$ROOTFS/.harness-ready"
}

MOUNTED=()
cleanup() {  # pass or fail: the simulator (its whole process group) stopped, then the mounts undone
  local rc=$?
  if [ "$rc" != 0 ] && [ -n "$CURRENT" ]; then echo "aarch64-check: FAILED at step '$CURRENT' (exit $rc)" >&2; fi
  stop_background
  local i
  for (( i=${#MOUNTED[@]}-1; i>=0; i-- )); do umount "${MOUNTED[$i]}" 2>/dev/null || umount -l "${MOUNTED[$i]}" || true; done
}
trap cleanup EXIT

mount_into() {  # mount_into ROOT: /proc and /dev for a chroot into ROOT, and this host's DNS
  local root=$1
  mountpoint -q "$root/proc" || { mount -t proc proc "$root/proc"; MOUNTED+=("$root/proc"); }
  mountpoint -q "$root/dev" || { mount --rbind /dev "$root/dev"; mount --make-rslave "$root/dev"; MOUNTED+=("$root/dev"); }
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  # this host's trust store (a network that re-signs TLS has its CA there); the rootfs's own otherwise
  if [ -f "$CA_BUNDLE" ]; then cp -L "$CA_BUNDLE" "$root/etc/ssl/certs/host-ca-bundle.crt"
  else cp "$root/etc/ssl/certs/ca-certificates.crt" "$root/etc/ssl/certs/host-ca-bundle.crt"; fi
}

copy_sources() {  # copy_sources ROOT: the tracked files as they are in the working tree, to ROOT/opt/src (the
  # cluster path copies `git archive HEAD` the same way)
  rm -rf "$1/opt/src" && mkdir -p "$1/opt/src"
  (cd "$REPO" && git ls-files -z | tar --null -T - -c) | tar -x -C "$1/opt/src"
}

enter_rootfs() { mount_into "$ROOTFS" && copy_sources "$ROOTFS"; }

ROOT=$ROOTFS
# the clean environment of a command in the rootfs
ROOTFS_ENV=(PATH=/usr/local/bin:/usr/bin:/bin HOME=/root LANG=C.UTF-8
  PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_PROGRESS_BAR=off PIP_DEFAULT_TIMEOUT=120
  PIP_CERT=/etc/ssl/certs/host-ca-bundle.crt SSL_CERT_FILE=/etc/ssl/certs/host-ca-bundle.crt PYTHONUNBUFFERED=1)
in_rootfs() {  # in_rootfs CMD...: run CMD in the rootfs (ROOT) with a clean environment
  chroot "$ROOT" /usr/bin/env -i "${ROOTFS_ENV[@]}" "$@"
}

check_arch() {
  local arch; arch=$(in_rootfs uname -m)
  echo "   rootfs: $(in_rootfs python3 --version), uname -m = $arch"
  [ "$arch" = aarch64 ]
}

build_venv() {  # the cluster path's command, with the source copy as SRC
  in_rootfs bash -c 'rm -rf /opt/venv && python3 -m venv /opt/venv && /opt/venv/bin/pip install --quiet /opt/src'
  in_rootfs /opt/venv/bin/python -c 'import crick, platform, sysconfig; print("   crick", crick.__version__, "from", crick.__file__, "on", platform.machine(), sysconfig.get_platform())'
}

harness_version() { in_rootfs /opt/venv/bin/harness --version; }

harness_plan() {
  local out; out=$(in_rootfs bash -c "cd /opt/src && /opt/venv/bin/harness plan $RECIPE") || return 1
  echo "$out" | head -3
  echo "$out" | grep -q 'point(s)'
}

sim_request() {  # the simulator in its own process group (chroot, env and the emulated harness sim), stopped as one
  setsid chroot "$ROOT" /usr/bin/env -i "${ROOTFS_ENV[@]}" bash -c "cd /tmp && exec /opt/venv/bin/harness sim \
    --model-path sim-model --served-model-name sim --host 127.0.0.1 --port $PORT --sim-profile demo" \
    > "$CACHE/sim.log" 2>&1 < /dev/null &
  local sim=$!
  background_group "$sim"
  local ok=0
  in_rootfs /opt/venv/bin/python /opt/src/tools/aarch64_request.py "http://127.0.0.1:$PORT" sim || ok=$?
  stop_process "$sim"
  if [ "$ok" != 0 ]; then tail -20 "$CACHE/sim.log" >&2; fi
  return "$ok"
}

docker_steps() {  # the Dockerfile's stages, translated to a script and run in a throwaway overlay of the rootfs
  local layer=$CACHE/docker-layer
  if mountpoint -q "$layer/merged"; then umount -R "$layer/merged"; fi
  rm -rf "$layer" && mkdir -p "$layer/upper" "$layer/work" "$layer/merged"
  mount -t overlay overlay -o "lowerdir=$ROOTFS,upperdir=$layer/upper,workdir=$layer/work" "$layer/merged"
  MOUNTED+=("$layer/merged")
  mount_into "$layer/merged"
  copy_sources "$layer/merged"
  python3 "$REPO/tools/aarch64_dockerfile.py" "$REPO/containers/Dockerfile" > "$layer/merged/opt/dockerfile-steps.sh"
  ROOT=$layer/merged in_rootfs bash -c 'cd /opt/src && bash -euo pipefail /opt/dockerfile-steps.sh'
  ROOT=$layer/merged in_rootfs bash -c 'harness=$(ls /opt/docker/stage-*/bin/harness | tail -1) &&
    "$harness" --version && cd /opt/src && "$harness" plan '"$RECIPE"' | head -1'
}

step "host: qemu-user-static and binfmt for aarch64" host_tools
step "rootfs: arm64 Debian bookworm (debootstrap)" make_rootfs
if [ "$DRIVER" = 1 ]; then
  step "rootfs: mounts and sources" enter_rootfs
  step "rootfs: runs aarch64" check_arch
  step "driver venv: python3 -m venv + pip install (the cluster path's build)" build_venv
  step "harness --version" harness_version
  step "harness plan $RECIPE" harness_plan
  step "harness sim: ready + one streamed /v1/chat/completions" sim_request
fi
if [ "$DOCKER" = 1 ]; then step "containers/Dockerfile: install steps in the rootfs" docker_steps; fi

echo
echo "aarch64-check: passed in $(( $(date +%s) - T0 ))s"
printf '%s\n' "${TIMES[@]}"
