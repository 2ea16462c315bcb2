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
# OUT_DIR/<name>.lines.txt; prints every table. Needs ptxas and nvdisasm (CUDA's bin) and python3.
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
  python3 - "$OUT_DIR/$name.sass" "$name" >"$OUT_DIR/$name.lines.txt" <<'PY'
import re, sys
from collections import Counter
path, name = sys.argv[1], sys.argv[2]
# nvdisasm -g: '//## File "/x/dot.mojo", line 102' (maybe '... inlined at "/x/dot.mojo", line 65' after it)
loc = re.compile(r'//## File "([^"]*)", line (\d+)(?:.*?inlined at "([^"]*)", line (\d+))?')
op = re.compile(r'^\s*/\*[0-9a-f]+\*/\s*(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)')
wanted = re.compile(r'^(LDS|STS|LDG|STG|LDGSTS|LDSM|STSM|ATOMS|ATOMG|ATOM|RED|REDG|LD|ST|LDL|STL|LDGDEPBAR|UBLKCP|UTMALDG)(\.|$)')
per_line, where = {}, ("?", 0)
for text in open(path, errors="replace"):
    m = loc.search(text)
    if m:
        f, l, f2, l2 = m.groups()
        # the learner's file: the .mojo that is not a library's (layout/, std/, max/ ...)
        lib = lambda p: p is None or "/kernels/" in p or p.startswith(("max/", "Mojo/", "std/", "layout/"))
        where = (f, int(l)) if not lib(f) else ((f2, int(l2)) if f2 and not lib(f2) else where)
        continue
    m = op.match(text)
    if m and wanted.match(m.group(1)):
        ins = m.group(1)
        ins = ".".join(p for p in ins.split(".") if p in ("128", "64", "U8", "S8", "U16", "S16", "E", "CONSTANT") or p == ins.split(".")[0] or p.startswith("X"))
        per_line.setdefault(where, Counter())[ins] += 1
print(f"== {name}")
for (f, l), c in sorted(per_line.items(), key=lambda x: (x[0][0], x[0][1])):
    print(f"  {f.split('/')[-1]}:{l}: " + ", ".join(f"{n} {k}" for k, n in sorted(c.items())))
PY
  cat "$OUT_DIR/$name.lines.txt"
done
exit $status
