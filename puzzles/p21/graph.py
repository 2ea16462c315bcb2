"""The graphs for puzzle 21 (written for you: the puzzle is the kernels).

Each graph takes the token numbers (int32, batch x seq) and the weights table
(float32, vocab x dim), and calls one of the two ops registered in
op/embedding.mojo: "embedding" (the coalesced kernel) or "embedding_2d".
"""

from __future__ import annotations

from pathlib import Path

from max.driver import Device
from max.dtype import DType
from max.engine import InferenceSession, Model
from max.graph import DeviceRef, Graph, TensorType, ops


def _load(op: str, session: InferenceSession, device: Device, kernels: Path,
          batch: int, seq: int, vocab: int, dim: int) -> Model:
    """One graph, one op, one shape: the sizes reach the Mojo op as compile-time parameters."""
    ref = DeviceRef.from_device(device)
    inputs = [TensorType(DType.int32, shape=[batch, seq], device=ref),
              TensorType(DType.float32, shape=[vocab, dim], device=ref)]
    with Graph(f"{op}_{batch}x{seq}x{vocab}x{dim}", input_types=inputs, custom_extensions=[kernels]) as graph:
        result = ops.custom(
            name=op,
            device=ref,
            values=list(graph.inputs),
            out_types=[TensorType(DType.float32, shape=[batch, seq, dim], device=ref)],
            parameters={"batch": batch, "seq": seq, "vocab": vocab, "dim": dim},
        )[0]
        graph.output(result)
    return session.load(graph)


def load_coalesced(session: InferenceSession, device: Device, kernels: Path, *,
                   batch: int, seq: int, vocab: int, dim: int) -> Model:
    """The op "embedding": one thread per output value, along the output."""
    return _load("embedding", session, device, kernels, batch, seq, vocab, dim)


def load_2d(session: InferenceSession, device: Device, kernels: Path, *,
            batch: int, seq: int, vocab: int, dim: int) -> Model:
    """The op "embedding_2d": positions along x, values along y."""
    return _load("embedding_2d", session, device, kernels, batch, seq, vocab, dim)
