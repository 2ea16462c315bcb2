# The graphs for puzzle 21 (written for you: the puzzle is the kernels).
#
# Each graph takes the token numbers (int32, batch x seq) and the weights table
# (float32, vocab x dim), and calls one of the two ops registered in
# op/embedding.mojo: "embedding" (the coalesced kernel) or "embedding_2d".
#ko 퍼즐 21의 그래프들입니다(미리 써 두었습니다: 퍼즐은 커널입니다).
#ko
#ko 그래프마다 토큰 번호(int32, batch x seq)와 가중치 표(float32, vocab x dim)를
#ko 받아, op/embedding.mojo에 등록한 두 연산 중 하나를 부릅니다. "embedding"(병합
#ko 접근 커널) 또는 "embedding_2d"입니다.

from __future__ import annotations

from pathlib import Path

from max.driver import Device
from max.dtype import DType
from max.engine import InferenceSession, Model
from max.graph import DeviceRef, Graph, TensorType, ops


def _load(op: str, session: InferenceSession, device: Device, kernels: Path,
          batch: int, seq: int, vocab: int, dim: int) -> Model:
    # One graph, one op, one shape: the sizes reach the Mojo op as compile-time parameters.
    #ko 그래프 하나, 연산 하나, 모양 하나: 크기는 컴파일 시간 파라미터로 Mojo 연산에 전해집니다.
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
    # The op "embedding": one thread per output value, along the output.
    #ko 연산 "embedding": 출력 값마다 스레드 하나, 출력을 따라 차례로.
    return _load("embedding", session, device, kernels, batch, seq, vocab, dim)


def load_2d(session: InferenceSession, device: Device, kernels: Path, *,
            batch: int, seq: int, vocab: int, dim: int) -> Model:
    # The op "embedding_2d": positions along x, values along y.
    #ko 연산 "embedding_2d": 위치는 x 방향, 값은 y 방향.
    return _load("embedding_2d", session, device, kernels, batch, seq, vocab, dim)
