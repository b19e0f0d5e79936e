#!/usr/bin/env bash
# On a lent GPU host: the client-timing benchmark (benchmarks/timing_error.py) at c48 over 120 s and c64 over
# 900 s, longer than one device call allows. Call it again and again, each call at most WAIT_S seconds: the
# first starts the benchmark in the background (its own session, so it outlives the call), every call waits
# for it and copies what is there (the log, each point's summary and per-request error parts) to $OUT.
# TIMING_SETTINGS (e.g. "--set client.workers=16") goes to both points. Wheels the host lacks travel in .whl/
# (or as .whl/site.tar.xz, a --target install of them for the host's Python: tests/gpu/lease_site.sh --check
# builds it and first proves here that it is enough). Each point's harness-run.log comes back too, so a point
# that failed says why.
# POINTS lists the points in order as CONC:WINDOW_S (default "48:120 64:900"; the recipe also has c256 and c512:
# POINTS="256:120 512:120", or "256:900" for the memory over a long window); put the one that matters most first
# when the lease may end before the last.
# Usage from the repository root: OUT=/some/dir WAIT_S=570 bash tests/gpu/timing_lease.sh
set -u -o pipefail
OUT=${OUT:-/tmp/timing-out}
WAIT_S=${WAIT_S:-570}
POINTS=${POINTS:-48:120 64:900}
W=/tmp/timing-lease
mkdir -p "$W" "$OUT"
if [ ! -e "$W/started" ]; then
  touch "$W/started"
  if [ -e .whl/site.tar.xz ]; then
    # a --target install of the wheels, made elsewhere for this host's Python (xz: a third smaller than the
    # wheels); its scripts' first lines name the Python that made it
    mkdir -p /tmp/site && tar -C /tmp/site --strip-components=1 -xJf .whl/site.tar.xz \
      && sed -i '1s|^#!.*python.*$|#!/usr/bin/env python3|' /tmp/site/bin/* || { echo "site.tar.xz did not unpack"; exit 9; }
  elif ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
      .whl/*.whl >"$W/pip.txt" 2>&1 || { echo "wheels did not install: $W/pip.txt"; exit 9; }
  fi
  # the benchmark runs from its own copy of the tree: a later device call lays the working tree out afresh
  mkdir -p "$W/tree" && tar -C . --exclude=./.whl --exclude=./.venv -cf - . | tar -C "$W/tree" -xf - \
    || { echo "could not copy the tree"; exit 9; }
  { nproc | sed "s/^/cores: /"; grep -m1 "model name" /proc/cpuinfo; nvidia-smi -L; python3 --version; } >"$W/env.txt" 2>&1
  # shellcheck disable=SC2016
  (cd "$W/tree" && setsid nohup env PYTHONPATH="/tmp/site:$W/tree" PATH="/tmp/site/bin:$PATH" PYTHONUNBUFFERED=1 bash -c '
    for p in $3; do
      python3 benchmarks/timing_error.py --conc "${p%%:*}" --duration "${p#*:}" $1 --out "$2/c${p%%:*}" \
        >"$2/c${p%%:*}.txt" 2>&1
    done
    touch "$2/done"' _ "${TIMING_SETTINGS:-}" "$W" "$POINTS" >/dev/null 2>&1 </dev/null &)
  echo "started in $W"
fi
for _ in $(seq "$WAIT_S"); do [ -e "$W/done" ] && break; sleep 1; done
cat "$W/env.txt"
for p in $POINTS; do
  p=c${p%%:*}
  [ -e "$W/$p.txt" ] && { echo "--- $p"; tail -7 "$W/$p.txt"; cp "$W/$p.txt" "$OUT/"; }
  for f in summary.json "$p/requests.jsonl" "$p/harness-run.log"; do
    [ -e "$W/$p/$f" ] && cp "$W/$p/$f" "$OUT/$p-$(basename "$f")"
  done
done
if [ -e "$W/done" ]; then echo "done"; else echo "still running: call again within the idle release"; fi
