# MAX graphs for puzzle 27 (block-wide patterns), written for you.
#
# Each part runs one custom op from the puzzle's Mojo package (op/):
#
#     part        op                 inputs (in order)                  outputs (in order)
#     sum         block_dot          a f32[128], b f32[128]             dot f32[1]
#     prefix_sum  block_bin_pack     x f32[128], target_bin int32[1]    packed f32[128], count f32[1]
#     broadcast   block_normalize    x f32[128]                         normalized f32[128]
#
# The target bin of part `prefix_sum` is an input tensor, not a build-time
# parameter, so one compiled graph serves all eight bins.
#
# The ops run on a GPU only: their CPU branch raises. The `build_*` functions
# only describe a graph (no device needed); the `load_*` functions compile it
# for a device with `session.load`.
#ko 퍼즐 27(블록 단위 패턴)의 MAX 그래프입니다. 미리 써 두었습니다.
#ko
#ko 파트마다 퍼즐의 Mojo 패키지(op/)에 있는 커스텀 연산 하나를 실행합니다.
#ko
#ko     파트        연산               입력(순서대로)                     출력(순서대로)
#ko     sum         block_dot          a f32[128], b f32[128]             dot f32[1]
#ko     prefix_sum  block_bin_pack     x f32[128], target_bin int32[1]    packed f32[128], count f32[1]
#ko     broadcast   block_normalize    x f32[128]                         normalized f32[128]
#ko
#ko 파트 `prefix_sum`의 목표 구간(target bin)은 빌드 시간 파라미터가 아니라 입력
#ko 텐서입니다. 그래서 컴파일한 그래프 하나로 구간 여덟 개를 모두 처리합니다.
#ko
#ko 연산은 GPU에서만 실행됩니다. CPU 쪽 분기는 오류를 냅니다. `build_*` 함수는
#ko 그래프를 기술하기만 하고(장치가 필요 없음), `load_*` 함수가 `session.load`로
#ko 장치에 맞게 컴파일합니다.

from __future__ import annotations

from pathlib import Path

from max.dtype import DType
from max.graph import DeviceRef, Graph, TensorType, ops

SIZE = 128


def _check_size(size: int) -> None:
    if size != SIZE:
        raise ValueError(f"puzzle 27 is written for size {SIZE}, got {size}")
        #ko= raise ValueError(f"퍼즐 27은 크기 {SIZE}에 맞춰 쓰였는데, 받은 크기는 {size}입니다")


def _vector(dev: DeviceRef, dtype: DType = DType.float32) -> TensorType:
    return TensorType(dtype, shape=[SIZE], device=dev)


def _scalar(dev: DeviceRef, dtype: DType = DType.float32) -> TensorType:
    return TensorType(dtype, shape=[1], device=dev)


def build_sum(dev: DeviceRef, kernels: Path, size: int = SIZE) -> Graph:
    # dot = sum(a * b), by the op `block_dot`.
    #ko dot = sum(a * b), 연산 `block_dot`으로.
    _check_size(size)
    with Graph("p27_sum", input_types=[_vector(dev), _vector(dev)],
               custom_extensions=[Path(kernels)]) as graph:
        a, b = graph.inputs
        dot = ops.custom(name="block_dot", device=dev, values=[a, b],
                         out_types=[_scalar(dev)])[0]
        graph.output(dot)
    return graph


def build_prefix_sum(dev: DeviceRef, kernels: Path, size: int = SIZE) -> Graph:
    # The values of x in the target bin, packed in order, and their count.
    #ko 목표 구간에 드는 x의 값을 순서대로 모은 것과 그 개수.
    _check_size(size)
    with Graph("p27_prefix_sum", input_types=[_vector(dev), _scalar(dev, DType.int32)],
               custom_extensions=[Path(kernels)]) as graph:
        x, target_bin = graph.inputs
        packed, count = ops.custom(name="block_bin_pack", device=dev, values=[x, target_bin],
                                   out_types=[_vector(dev), _scalar(dev)])
        graph.output(packed, count)
    return graph


def build_broadcast(dev: DeviceRef, kernels: Path, size: int = SIZE) -> Graph:
    # normalized = x / mean(x), by the op `block_normalize`.
    #ko normalized = x / mean(x), 연산 `block_normalize`로.
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
