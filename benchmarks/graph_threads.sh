#!/usr/bin/env bash
# What a MAX graph build's threads cost: benchmarks/floor.py (p18's op precompiled, then its
# graph built and run on the CPU and on the GPU) with an empty MAX cache each time, alone
# with every core, on one core and on two; then eight at once, first free to use every
# core, then each held to two of its own (taskset). Prints each run's wall and CPU
# seconds (/usr/bin/time) and each batch's wall time.
#
#   benchmarks/graph_threads.sh        (from the repository root, on a 16-core host)
set -u
one() {  # LABEL CORES(or "")
  local cache work pin=()
  cache=$(mktemp -d) work=$(mktemp -d)
  [ -n "$2" ] && pin=(taskset -c "$2")
  MODULAR_CACHE_DIR=$cache /usr/bin/time -f "$1 wall=%e user=%U sys=%S" "${pin[@]}" \
    python3 benchmarks/floor.py --work "$work" --json > "$work.log" 2>&1
  tail -1 "$work.log"
  rm -rf "$cache" "$work" "$work.log"
}
one alone-unpinned ""
one alone-1core 0
one alone-2core 0-1
for mode in unpinned pinned; do
  start=$(date +%s.%N)
  for k in 0 1 2 3 4 5 6 7; do
    cores=""
    [ "$mode" = pinned ] && cores="$((2 * k))-$((2 * k + 1))"
    one "x8-$mode-$k" "$cores" &
  done
  wait
  echo "x8-$mode total wall $(python3 -c "import time; print(round(time.time() - $start, 1))")"
done
