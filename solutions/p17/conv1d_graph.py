# Puzzle 17, the graph: call the conv1d op from Python.
#
# The graph has two inputs, a (size values) and b (conv weights), and one
# output of size values. `size` and `conv` reach the Mojo op as compile-time
# parameters: MAX compiles the op once per shape.
#ko 퍼즐 17, 그래프: Python에서 conv1d 연산을 부릅니다.
#ko
#ko 그래프의 입력은 a(값 size개)와 b(가중치 conv개) 두 개, 출력은 값 size개
#ko 하나입니다. `size`와 `conv`는 컴파일 시간 매개변수로 Mojo 연산에
#ko 전달됩니다. MAX는 모양마다 연산을 한 번씩 컴파일합니다.

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
        #ko FILL IN: "conv1d"로 등록된 연산을 ops.custom으로 부릅니다. 그래프의
        #ko 두 입력(a, 그다음 b)을 값으로, a와 모양이 같은 출력 하나, 그리고
        #ko execute가 선언한 매개변수(size와 conv)를 넘깁니다. 연산의 결과를
        #ko 그래프의 출력으로 삼습니다. (8줄 정도)
        #| pass
        result = ops.custom(
            name="conv1d",
            device=where,
            values=[graph.inputs[0], graph.inputs[1]],
            out_types=[signal],
            parameters={"size": size, "conv": conv},
        )[0]
        graph.output(result)
        # END FILL IN
    return session.load(graph)
