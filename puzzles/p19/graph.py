# The graph for puzzle 19 (written for you: the puzzle is the transpose and the glue).
#
# One custom op, "attention", takes the query (1 x d), the keys and the values
# (seq x d each) and returns the output (1 x d). It also has three outputs the
# graph never returns: MAX allocates them, and the GPU steps use them as
# scratch (K transposed, the scores, the weights).
#ko 퍼즐 19의 그래프입니다(미리 써 두었습니다: 퍼즐은 전치와 그 사이를 잇는 코드입니다).
#ko
#ko 커스텀 연산 하나, "attention"이 쿼리(1 x d)와 키, 값(각각 seq x d)을 받아
#ko 출력(1 x d)을 돌려줍니다. 그래프가 돌려주지 않는 출력도 셋 있습니다. MAX가
#ko 메모리를 잡아 주고, GPU 단계들이 작업 공간으로 씁니다(전치한 K, 점수, 가중치).

from __future__ import annotations

from pathlib import Path

from max.driver import Device
from max.dtype import DType
from max.engine import InferenceSession, Model
from max.graph import DeviceRef, Graph, TensorType, ops


def load(session: InferenceSession, device: Device, kernels: Path, *, seq: int, d: int) -> Model:
    # Build the graph for one shape and load it on `device`.
    #ko 모양 하나에 대한 그래프를 만들어 `device`에 올립니다.
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
