# Puzzle 17, the graph: call the conv1d op from Python.
#
# The graph has two inputs, a (size values) and b (conv weights), and one
# output of size values. `size` and `conv` reach the Mojo op as compile-time
# parameters: MAX compiles the op once per shape.

from pathlib import Path

from max.driver import Device
from max.dtype import DType
from max.engine import InferenceSession, Model
from max.graph import DeviceRef, Graph, TensorType, ops


def load(session: InferenceSession, device: Device, kernels: Path, *, size: int, conv: int) -> Model:
    where = DeviceRef.from_device(device)
    signal = TensorType(DType.float32, shape=[size], device=where)
    weights = TensorType(DType.float32, shape=[conv], device=where)
    with Graph(f"conv1d_{size}x{conv}", input_types=[signal, weights], custom_extensions=[kernels]) as graph:
        # FILL IN: call the op registered as "conv1d" with ops.custom: the
        # graph's two inputs (a, then b) as its values, one output shaped like
        # a, and the parameters execute declares (size and conv). Make the
        # op's result the graph's output. (about 8 lines)
        pass
    return session.load(graph)
