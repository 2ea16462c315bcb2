"""The graph for puzzle 19 (written for you: the puzzle is the transpose and the glue).

One custom op, "attention", takes the query (1 x d), the keys and the values
(seq x d each) and returns the output (1 x d). It also has three outputs the
graph never returns: MAX allocates them, and the GPU steps use them as
scratch (K transposed, the scores, the weights).
"""

from __future__ import annotations

from pathlib import Path

from max.driver import Device
from max.dtype import DType
from max.engine import InferenceSession, Model
from max.graph import DeviceRef, Graph, TensorType, ops


def load(session: InferenceSession, device: Device, kernels: Path, *, seq: int, d: int) -> Model:
    """Build the graph for one shape and load it on `device`."""
    ref = DeviceRef.from_device(device)

    def tensor(*shape: int) -> TensorType:
        return TensorType(DType.float32, shape=list(shape), device=ref)

    with Graph(f"attention_{seq}x{d}", input_types=[tensor(1, d), tensor(seq, d), tensor(seq, d)],
               custom_extensions=[kernels]) as graph:
        output, _k_t, _scores, _weights = ops.custom(
            name="attention",
            device=ref,
            values=list(graph.inputs),
            out_types=[tensor(1, d), tensor(d, seq), tensor(1, seq), tensor(1, seq)],
            parameters={"seq": seq, "d": d},
        )
        graph.output(output)
    return session.load(graph)
