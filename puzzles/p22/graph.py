# The graph for puzzle 22 (written for you: the puzzle is the kernel).
#
# One custom op, "layernorm_linear_backward", takes the forward inputs and the
# gradient of the loss with respect to the forward output, and returns the
# forward output together with the five gradients.
#ko 퍼즐 22의 그래프입니다(미리 써 두었습니다: 퍼즐은 커널입니다).
#ko
#ko 커스텀 연산 하나, "layernorm_linear_backward"가 순전파의 입력과, 순전파 출력에
#ko 대한 손실의 기울기를 받아, 순전파 출력과 기울기 다섯 개를 함께 돌려줍니다.

from __future__ import annotations

from pathlib import Path

from max.driver import Device
from max.dtype import DType
from max.engine import InferenceSession, Model
from max.graph import DeviceRef, Graph, TensorType, ops

OP_NAME = "layernorm_linear_backward"


def load(
    session: InferenceSession,
    device: Device,
    kernels: Path,
    *,
    batch: int,
    seq: int,
    hidden: int,
    out_dim: int,
) -> Model:
    # Build the graph for one shape and load it on `device`.
    #ko 모양 하나에 대한 그래프를 만들어 `device`에 올립니다.
    ref = DeviceRef.from_device(device)

    def tensor(*shape: int) -> TensorType:
        return TensorType(DType.float32, shape=list(shape), device=ref)

    # Inputs, in the order the workbook feeds them:
    # x, ln_weight, ln_bias, weight, bias, grad_output.
    #ko 입력, 워크북이 넣어 주는 순서대로:
    #ko x, ln_weight, ln_bias, weight, bias, grad_output.
    input_types = [
        tensor(batch, seq, hidden),
        tensor(hidden),
        tensor(hidden),
        tensor(out_dim, hidden),
        tensor(out_dim),
        tensor(batch, seq, out_dim),
    ]
    # Outputs, in the order the op's execute lists them:
    # output, grad_input, grad_ln_weight, grad_ln_bias, grad_weight, grad_bias.
    #ko 출력, 연산의 execute가 적은 순서대로:
    #ko output, grad_input, grad_ln_weight, grad_ln_bias, grad_weight, grad_bias.
    out_types = [
        tensor(batch, seq, out_dim),
        tensor(batch, seq, hidden),
        tensor(hidden),
        tensor(hidden),
        tensor(out_dim, hidden),
        tensor(out_dim),
    ]
    with Graph(
        f"layernorm_linear_backward_{batch}x{seq}x{hidden}x{out_dim}",
        input_types=input_types,
        custom_extensions=[kernels],
    ) as graph:
        results = ops.custom(
            name=OP_NAME,
            device=ref,
            values=list(graph.inputs),
            out_types=out_types,
            # The sizes reach the Mojo op as compile-time parameters: the op
            # is compiled once per shape, and the kernel must use them.
            #ko 크기는 컴파일 시간 파라미터로 Mojo 연산에 전해집니다. 연산은 모양마다
            #ko 한 번씩 컴파일되고, 커널은 이 값들을 써야 합니다.
            parameters={
                "batch": batch,
                "seq": seq,
                "hidden": hidden,
                "out_dim": out_dim,
                "dtype": DType.float32,
            },
        )
        graph.output(*results)
    return session.load(graph)
