# Puzzle 18, part 3: call the softmax op from Python through a MAX graph.
#
# A MAX graph describes a computation; `session.load` compiles it for one
# device, and the workbook then runs the compiled model on its test inputs.
#ko 퍼즐 18, 파트 3: Python에서 MAX 그래프를 통해 softmax 연산을 호출합니다.
#ko
#ko MAX 그래프는 계산을 기술합니다. `session.load`가 그래프를 장치 하나에
#ko 맞게 컴파일하면, 워크북이 컴파일된 모델을 테스트 입력으로 실행합니다.

from pathlib import Path

from max.driver import Device
from max.dtype import DType
from max.engine import InferenceSession, Model
from max.graph import DeviceRef, Graph, TensorType, ops


def load(session: InferenceSession, device: Device, kernels: Path, *, size: int) -> Model:
    # Build a graph that applies our "softmax" op to one float32 vector, and
    # compile it in `session` for `device`.
    #ko float32 벡터 하나에 우리의 "softmax" 연산을 적용하는 그래프를 만들고,
    #ko `session`에서 `device`용으로 컴파일합니다.
    where = DeviceRef.from_device(device)
    vector = TensorType(DType.float32, shape=[size], device=where)
    with Graph("softmax", input_types=[vector], custom_extensions=[kernels]) as graph:
        # FILL IN: call the op registered as "softmax" with ops.custom: the
        # graph's input as its value, one output of the same type as the input,
        # and the parameters the Mojo op declares (input_size, dtype). Take
        # the op's first result and make it the graph's output. (about 8 lines)
        #ko FILL IN: "softmax"로 등록된 연산을 ops.custom으로 호출합니다. 그래프의
        #ko 입력을 값으로, 입력과 같은 타입의 출력 하나, 그리고 Mojo 연산이 선언한
        #ko 매개변수(input_size, dtype)를 넘깁니다. 연산의 첫 번째 결과를 그래프의
        #ko 출력으로 삼습니다. (8줄 정도)
        #| pass
        probabilities = ops.custom(
            name="softmax",
            device=where,
            values=[graph.inputs[0]],
            out_types=[vector],
            parameters={"input_size": size, "dtype": DType.float32},
        )[0]
        graph.output(probabilities)
        # END FILL IN
    # FILL IN: compile the graph for the session's device. (1 line)
    #ko FILL IN: 세션의 장치에 맞게 그래프를 컴파일합니다. (1줄)
    #| raise NotImplementedError("load() is not written yet")
    #ko= raise NotImplementedError("load()를 아직 쓰지 않았습니다")
    return session.load(graph)
    # END FILL IN
