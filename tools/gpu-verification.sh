#!/usr/bin/env bash
# The runs docs/verification.md records, on a machine with an NVIDIA GPU.
#
#   tools/gpu-verification.sh OUT_DIR GROUP...
#
# GROUP: doctor | solutions | skeletons | verify-1 | verify-2 | verify-3 | pytest-gpu | bench
#        | wrong (the kernels named in WRONG, space-separated) | sanitize-line (p03/no_guard, -g1 line)
#        | class (issue 38's class, one process against Ray: every GPU here, 1, 2 and 4 tasks a GPU)
#        | differential (the simulator against the GPU: the puzzles or kernels in DIFF, default all)
# Each writes OUT_DIR/<group>.log (and .json where there is one) and prints its exit code
# and time. Run from the repository root, with the workbook importable (PYTHON, default
# python3). The groups are split so that each fits in a few minutes.
set -u
out=${1:?usage: tools/gpu-verification.sh OUT_DIR GROUP...}
shift
py=${PYTHON:-python3}
mkdir -p "$out"
export WORKBOOK_NO_PROGRESS=1

run() {  # run NAME COMMAND...: its output in OUT_DIR/NAME.log, its JSON (stdout) in NAME.json if asked
  local name=$1; shift
  local start=$SECONDS
  "$@" > "$out/$name.out" 2> "$out/$name.log"
  local rc=$?
  echo "$name: exit $rc after $((SECONDS - start)) s"
  echo "exit $rc after $((SECONDS - start)) s" >> "$out/$name.log"
}

chapter1="p01 p02 p03 p04 p05 p06 p07 p08"
chapter2="p10 p11 p12 p13 p14 p15 p16"
ops="p18 p22 p27"

for group in "$@"; do
  case $group in
    doctor) run doctor $py -m workbook doctor ;;
    solutions) run solutions $py -m workbook check --all --solutions --json --seed 12 ;;
    skeletons) run skeletons $py -m workbook check --all --json --seed 12 ;;
    verify-1) run verify-1 $py -m workbook author verify $chapter1 --run --json ;;
    verify-2) run verify-2 $py -m workbook author verify $chapter2 --run --json ;;
    verify-3) run verify-3 $py -m workbook author verify $ops --run --json ;;
    pytest-gpu) run pytest-gpu $py -m pytest -q -m gpu -p no:cacheprovider ;;
    bench) run bench $py benchmarks/bench.py --repeat 3 --out "$out/bench.json" ;;
    class) run class $py benchmarks/class_grade.py --label "${LABEL:-gpu-host}" --share 1 --share 2 --share 4 \
             --logs "$out/classlogs" --out "$out/class.json" ;;
    differential) run differential $py tools/differential.py ${DIFF:-} --per-gpu 4 \
                    --json "$out/differential.json" --markdown "$out/differential.md" ;;
    wrong) run wrong $py tools/run_wrong.py ${WRONG:?set WRONG to kernel ids} ;;
    sanitize-line)  # a compute-sanitizer finding names the learner's line (the -g1 build)
      tmp=$(mktemp -d) && cp -r puzzles solutions workbook pyproject.toml "$tmp"/ &&
        cp tests/wrong/p03/no_guard/*.mojo "$tmp"/puzzles/p03/ &&
        (cd "$tmp" && run sanitize-line $py -m workbook check p03 --sanitize --json --seed 12) ;;
    *) echo "unknown group $group"; exit 2 ;;
  esac
done
