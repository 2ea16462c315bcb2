"""p31 on a GPU: for each block size, the workbook's theoretical occupancy, the driver's own
blocks per SM for the same kernel (cuOccupancyMaxActiveBlocksPerMultiprocessor through
max.gpu.host's DeviceFunction), and the timed median on the part's speed case. The
numbers the puzzle's placeholders wait for (text.*.md, puzzle.toml's [parts.speed]).

    python tools/occupancy_sweep.py [OUT.json]

Run on the GPU host from the repository (PYTHONPATH=.). Each configuration is p31's
solution with BLOCK or HUB_BLOCK replaced, checked by the engine on the GPU alone. The
driver's count is printed by a small Mojo program compiled beside it; where it differs
from the workbook's, the workbook's register count or arithmetic is wrong for this GPU.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from workbook.author import curriculum
from workbook.check import engine
from workbook.core import toolchain
from workbook.course import catalog

CONFIGS = [("walk", "BLOCK", b) for b in (32, 64, 192, 256, 1024)] + \
          [("hub", "HUB_BLOCK", b) for b in (256, 384, 512, 1024)]
SOLUTION = {"BLOCK": 256, "HUB_BLOCK": 512}

DRIVER = """
from max.gpu.host import DeviceContext
import walks

def main() raises:
    var ctx = DeviceContext()
    var w = ctx.compile_function[walks.walk[1 << 26, 1 << 22]]()
    var h = ctx.compile_function[walks.walk_hub[8192 + (1 << 26), 1 << 22]]()
    print("walk", w.occupancy_max_active_blocks_per_multiprocessor(walks.BLOCK, 0))
    print("hub", h.occupancy_max_active_blocks_per_multiprocessor(walks.HUB_BLOCK, 0))
"""


def with_choice(text: str, name: str, value: int) -> str:
    line = f"comptime {name} = {SOLUTION[name]}\n"
    assert line in text, line
    return text.replace(line, f"comptime {name} = {value}\n")


def driver_blocks(source: str) -> dict[str, int]:
    """The driver's blocks per SM for both kernels, as this source sets their block sizes."""
    mojo = toolchain.mojo_binary()
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "walks.mojo").write_text(source)
        Path(folder, "main.mojo").write_text(DRIVER)
        subprocess.run([str(mojo), "build", "-I", folder, f"{folder}/main.mojo", "-o", f"{folder}/main"], check=True)
        out = subprocess.run([f"{folder}/main"], capture_output=True, text=True, check=True).stdout
    return {k: int(v) for k, v in (line.split() for line in out.splitlines() if line.strip())}


def main() -> None:
    rows = []
    with curriculum.Sandbox() as sandbox:
        for part, name, value in CONFIGS:
            puzzle = sandbox.puzzle("p31")
            path = puzzle.dir / "walks.mojo"
            source = with_choice(path.read_text(), name, value)
            path.write_text(source)
            result = engine.check_puzzle(catalog.load("p31", sandbox.dir),
                                         engine.Options(seed=5, part=part, devices=("gpu",), cache=False))
            res = next(p for p in result.parts if p.id == part)
            occ = res.kernels.get("occupancy")
            ours = occ.occupancy[0] if occ and occ.occupancy else None
            row = {"part": part, name: value, "status": res.status.value,
                   "registers": ours.registers if ours else None, "shared": ours.shared if ours else None,
                   "blocks_per_sm": ours.blocks_per_sm if ours else None,
                   "occupancy": ours.occupancy if ours else None, "limiting": ours.limiting if ours else None,
                   "driver_blocks_per_sm": driver_blocks(source).get(part),
                   "median_us": res.speed.median_us if res.speed else None}
            rows.append(row)
            print(json.dumps(row), flush=True)
    for part, name in (("walk", "BLOCK"), ("hub", "HUB_BLOCK")):
        base = next((r["median_us"] for r in rows if r["part"] == part and r[name] == SOLUTION[name]), None)
        for r in rows:
            if r["part"] == part and base and r["median_us"]:
                r["ratio_to_solution"] = r["median_us"] / base
    mismatched = [r for r in rows if r["driver_blocks_per_sm"] != r["blocks_per_sm"]]
    print(f"driver and workbook disagree on blocks per SM: {len(mismatched)} of {len(rows)}")
    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
