#!/usr/bin/env bash
# SASS per source line for PTX modules written by `tools/ncu_explain.py --ptx-dir DIR`:
# what ptxas (the GPU's own assembler) makes of each memory instruction, to confirm the
# PTX-level evidence of docs/ncu.md's differences (ptxas may merge or split further).
#
#   tools/ncu_sass.sh PTX_DIR [OUT_DIR] [ARCH]     (ARCH: sm_90a, what the PTX targets, unless named)
#
# For each PTX_DIR/*.ptx: ptxas -lineinfo, then nvdisasm -g (line info as comments), then
# per source line the count of LDS/STS/LDG/STG/LDGSTS/LDSM/ATOM*/RED*/LD/ST/LDL/STL with their
# width suffixes (LDS.128 ...). Writes OUT_DIR/<name>.sass (the disassembly) and
# OUT_DIR/<name>.lines.txt (tools/ncu_sass_lines.py: the innermost line of the learner's file an
# instruction is inlined from); prints every table. Needs ptxas and nvdisasm (CUDA's bin) and python3.
set -u
PTX_DIR=${1:?usage: tools/ncu_sass.sh PTX_DIR [OUT_DIR] [ARCH]}
OUT_DIR=${2:-${OUT:-/tmp/ncu_sass}}
ARCH=${3:-sm_90a}
CUDA_BIN=${CUDA_BIN:-/usr/local/cuda/bin}
PTXAS=$CUDA_BIN/ptxas
NVDISASM=$CUDA_BIN/nvdisasm
mkdir -p "$OUT_DIR"
"$PTXAS" --version | tail -1
status=0
for ptx in "$PTX_DIR"/*.ptx; do
  name=$(basename "$ptx" .ptx)
  if ! "$PTXAS" -arch="$ARCH" -O3 -lineinfo -o "$OUT_DIR/$name.cubin" "$ptx" 2>"$OUT_DIR/$name.ptxas.txt"; then
    echo "== $name: ptxas failed"; cat "$OUT_DIR/$name.ptxas.txt"; status=1; continue
  fi
  { "$NVDISASM" -gi -c "$OUT_DIR/$name.cubin" || "$NVDISASM" -g -c "$OUT_DIR/$name.cubin"; } >"$OUT_DIR/$name.sass" 2>/dev/null || { echo "== $name: nvdisasm failed"; status=1; }
  python3 "$(dirname "$0")/ncu_sass_lines.py" "$OUT_DIR/$name.sass" "$name" >"$OUT_DIR/$name.lines.txt"
  cat "$OUT_DIR/$name.lines.txt"
done
exit $status
