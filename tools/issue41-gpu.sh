#!/usr/bin/env bash
# Issue 41 on a GPU host: the simulator's traffic counters against Nsight Compute, and the
# speed verdicts' stability (docs/ncu.md says what each run is for).
#
#   tools/issue41-gpu.sh OUT_DIR GROUP...
#
# GROUP (each fits in a few minutes of an H200; run them in this order):
#   ncu-1 | ncu-2 | ncu-5   the course's kernels (chapters 1, 2 with p21, 5) and the pinned
#                           patterns (p92, with ncu-1), simulator and ncu: OUT_DIR/ncu/<id>.json
#   ncu-table               the table (OUT_DIR/ncu/ncu.md, .json), written into docs/ncu.md, the
#                           learner's note (workbook/judging/ncu_record.json) and p92's counts.toml from
#                           ncu; then the pinned-pattern test against them; copies of the three
#                           files into OUT_DIR
#   speed-tests             the GPU tests of the timing (pytest -m gpu tests/test_speed.py)
#   stability-p21 | stability-p21-wrong | stability-p16
#                           ten checks each (benchmarks/speed_stability.py): OUT_DIR/stability.json
# Keep OUT_DIR/ncu/<id>.json and meta.json in benchmarks/results/ncu-<gpu>-<date>/: the table is
# made again from them anywhere (`tools/ncu_table.py THAT_FOLDER --table --docs docs/ncu.md --record`).
# Each writes OUT_DIR/<group>.log and prints its exit code and time. Run from the repository
# root, with the workbook importable (PYTHON, default python3) and ncu on PATH or in
# /usr/local/cuda/bin.
set -u
out=${1:?usage: tools/issue41-gpu.sh OUT_DIR GROUP...}
shift
py=${PYTHON:-python3}
mkdir -p "$out/ncu"
export WORKBOOK_NO_PROGRESS=1

run() {  # run NAME COMMAND...: its output in OUT_DIR/NAME.log
  local name=$1; shift
  local start=$SECONDS
  "$@" > "$out/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc after $((SECONDS - start)) s"
  echo "exit $rc after $((SECONDS - start)) s" >> "$out/$name.log"
}

chapter1="p01 p02 p03 p04 p05 p06 p07 p08 p92"
chapter2="p09 p10 p11 p12 p13 p14 p15 p16 p21"
chapter5="p28 p29 p30 p31 p32 p33 p34 p35 p36"

for group in "$@"; do
  case $group in
    ncu-1) run ncu-1 $py tools/ncu_table.py "$out/ncu" $chapter1 --jobs 4 ;;
    ncu-2) run ncu-2 $py tools/ncu_table.py "$out/ncu" $chapter2 --jobs 4 ;;
    ncu-5) run ncu-5 $py tools/ncu_table.py "$out/ncu" $chapter5 --jobs 4 ;;
    ncu-table)
      run ncu-table $py tools/ncu_table.py "$out/ncu" --table --docs docs/ncu.md --record --write-pins
      cp docs/ncu.md workbook/judging/ncu_record.json tests/data/simbook/puzzles/p92/counts.toml "$out/" 2>/dev/null
      run pinned-test $py -m pytest -q -p no:cacheprovider tests/test_traffic_patterns.py ;;
    speed-tests) run speed-tests $py -m pytest -q -p no:cacheprovider -m gpu tests/test_speed.py ;;
    stability-p21) run stability-p21 $py benchmarks/speed_stability.py "$out/stability.json" --only p21/solution ;;
    stability-p21-wrong)
      run stability-p21-wrong $py benchmarks/speed_stability.py "$out/stability.json" --only p21/strided_threads ;;
    stability-p16) run stability-p16 $py benchmarks/speed_stability.py "$out/stability.json" --only p16/solution ;;
    *) echo "unknown group $group"; exit 2 ;;
  esac
done
