#!/usr/bin/env bash
# Builds .whl/site.tar.xz for tests/gpu/timing_lease.sh: the packages of tests/gpu/lease-site.txt installed with
# --target for a GPU host's Python (default 3.12, x86_64), packed with xz (it travels inside the device call's 64 MiB).
#   bash tests/gpu/lease_site.sh            # build .whl/site.tar.xz
#   bash tests/gpu/lease_site.sh --check    # first: the same pins for this machine's Python, in a bare venv with
#                                           # numpy and nothing else, run the benchmark (c48, 10 s) with an empty
#                                           # cache and HOME; a package the list lacks fails it here, not on the lease
set -eu -o pipefail
HOST_PY=${HOST_PY:-3.12}
LIST=tests/gpu/lease-site.txt
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
pins=$(grep -v '^#' "$LIST")
if [ "${1:-}" = "--check" ]; then
  python3 -m venv "$W/bare"
  # shellcheck disable=SC2086
  "$W/bare/bin/pip" install -q --no-deps --only-binary=:all: $pins numpy
  mkdir -p "$W/home"
  if ! HOME="$W/home" HARNESS_CACHE_DIR="$W/home/cache" PYTHONPATH="$PWD" PATH="$W/bare/bin:$PATH" \
      "$W/bare/bin/python" benchmarks/timing_error.py --conc 48 --duration 10 --out "$W/run" >"$W/run.txt" 2>&1; then
    cat "$W/run.txt"; grep -rhao "No module named '[^'.]*\|No package metadata was found for [A-Za-z0-9_.-]*" "$W/run" \
      | sort -u; echo "lease_site: the benchmark fails with only $LIST; add what it names"; exit 1
  fi
  tail -4 "$W/run.txt"; echo "lease_site: $LIST is enough here"
fi
plat=""
for p in manylinux_2_34 manylinux_2_31 manylinux_2_28 manylinux_2_27 manylinux_2_24 manylinux_2_17 manylinux2014 \
         manylinux_2_12 manylinux2010 manylinux1; do plat="$plat --platform ${p}_x86_64"; done
# shellcheck disable=SC2086
python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$HOST_PY" --implementation cp $plat \
  -d "$W/wheels" $pins
# shellcheck disable=SC2086
python3 -m pip install -q --no-index --no-deps --no-compile --target "$W/site" --python-version "$HOST_PY" \
  --implementation cp --only-binary=:all: $plat "$W"/wheels/*.whl
mkdir -p .whl
tar -C "$W" -cf - site | xz -T0 -6 >.whl/site.tar.xz
echo "lease_site: .whl/site.tar.xz $(du -m .whl/site.tar.xz | cut -f1) MiB for Python $HOST_PY (name .whl in the call's carry)"
