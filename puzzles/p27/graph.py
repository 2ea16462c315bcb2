"""MAX graphs for puzzle 27 (block-wide patterns). Written by the author.

Each part runs one custom op from the puzzle's Mojo package (op/):

    part        op                 inputs (in order)                    outputs (in order)
    sum         block_dot          a f32[128], b f32[128]               dot f32[1]
    prefix_sum  block_bin_pack     x f32[128], target_bin int32[1]      packed f32[128], count f32[1]
    broadcast   block_normalize    x f32[128]                           normalized f32[128]

The target bin of part `prefix_sum` is an input tensor, not a build-time
parameter, so one compiled graph serves all eight bins.

The ops run on a GPU only: their CPU branch raises. The `build_*` functions
only describe a graph (no device needed); the `load_*` functions compile it
for a device with `session.load`.
"""

from __future__ import annotations

from pathlib import Path

from max.dtype import DType
from max.graph import DeviceRef, Graph, TensorType, ops

SIZE = 128


def _check_size(size: int) -> None:
    if size != SIZE:
        raise ValueError(f"puzzle 27 is written for size {SIZE}, got {size}")


def _vector(dev: DeviceRef, dtype: DType = DType.float32) -> TensorType:
    return TensorType(dtype, shape=[SIZE], device=dev)


def _scalar(dev: DeviceRef, dtype: DType = DType.float32) -> TensorType:
    return TensorType(dtype, shape=[1], device=dev)


def build_sum(dev: DeviceRef, kernels: Path, size: int = SIZE) -> Graph:
    """dot = sum(a * b), by the op `block_dot`."""
    _check_size(size)
    with Graph("p27_sum", input_types=[_vector(dev), _vector(dev)],
               custom_extensions=[Path(kernels)]) as graph:
        a, b = graph.inputs
        dot = ops.custom(name="block_dot", device=dev, values=[a, b],
                         out_types=[_scalar(dev)])[0]
        graph.output(dot)
    return graph


def build_prefix_sum(dev: DeviceRef, kernels: Path, size: int = SIZE) -> Graph:
    """The values of x in the target bin, packed in order, and their count."""
    _check_size(size)
    with Graph("p27_prefix_sum", input_types=[_vector(dev), _scalar(dev, DType.int32)],
               custom_extensions=[Path(kernels)]) as graph:
        x, target_bin = graph.inputs
        packed, count = ops.custom(name="block_bin_pack", device=dev, values=[x, target_bin],
                                   out_types=[_vector(dev), _scalar(dev)])
        graph.output(packed, count)
    return graph


def build_broadcast(dev: DeviceRef, kernels: Path, size: int = SIZE) -> Graph:
    """normalized = x / mean(x), by the op `block_normalize`."""
    _check_size(size)
    with Graph("p27_broadcast", input_types=[_vector(dev)],
               custom_extensions=[Path(kernels)]) as graph:
        (x,) = graph.inputs
        normalized = ops.custom(name="block_normalize", device=dev, values=[x],
                                out_types=[_vector(dev)])[0]
        graph.output(normalized)
    return graph


def load_sum(session, device, kernels: Path, **params):
    return session.load(build_sum(DeviceRef.from_device(device), kernels, **params))


def load_prefix_sum(session, device, kernels: Path, **params):
    return session.load(build_prefix_sum(DeviceRef.from_device(device), kernels, **params))


def load_broadcast(session, device, kernels: Path, **params):
    return session.load(build_broadcast(DeviceRef.from_device(device), kernels, **params))
