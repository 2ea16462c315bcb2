# Puzzle 18, part 3: call the softmax op from Python through a MAX graph.
#
# A MAX graph describes a computation; `session.load` compiles it for one
# device, and the workbook then runs the compiled model on its test inputs.

from pathlib import Path

from max.driver import Device
from max.dtype import DType
from max.engine import InferenceSession, Model
from max.graph import DeviceRef, Graph, TensorType, ops


def load(session: InferenceSession, device: Device, kernels: Path, *, size: int) -> Model:
    # Build a graph that applies our "softmax" op to one float32 vector, and
    # compile it in `session` for `device`.
    where = DeviceRef.from_device(device)
    vector = TensorType(DType.float32, shape=[size], device=where)
    with Graph("softmax", input_types=[vector], custom_extensions=[kernels]) as graph:
        # FILL IN: call the op registered as "softmax" with ops.custom: the
        # graph's input as its value, one output of the same type as the input,
        # and the parameters the Mojo op declares (input_size, dtype). Take
        # the op's first result and make it the graph's output. (about 8 lines)
        pass
    # FILL IN: compile the graph for the session's device. (1 line)
    raise NotImplementedError("load() is not written yet")
