# WRONG ON PURPOSE (eight_byte_claim): part 2 claims 8-byte alignment, two floats', at offsets 1 to 3: false at offsets 1 and 3.
# Puzzle 35: alignment. One job, output[i] = 2 * a[offset + i] + b[offset + i],
# written three ways; the values are the easy part.
#
# A GPU moves global memory fastest in wide pieces: one `ld.global.v4.b32`
# instruction brings 4 floats (16 bytes, 128 bits) where `ld.global.b32`
# brings 1. The compiler only emits the wide one when it can prove that the
# address is a multiple of 16 bytes, because a 128-bit access at any other
# address is a fault on the GPU. So a load of 4 floats at once is:
#
#     unsafe_load[width=4](i)                  alignment 4 (one float's):
#                                              4 loads of 32 bits in the PTX
#     unsafe_load[width=4, alignment=16](i)    a promise that the address is a
#                                              multiple of 16: 1 load of 128 bits
#
#     floats      0  1  2  3 | 4  5  6  7 | 8  9 10 11 | 12 ...
#     16 B lines  [ line 0  ] [ line 1  ] [ line 2   ]
#     offset = 4: a vector at offset + 4t starts a line: the promise holds
#     offset = 3: every vector straddles two lines: it would be a lie
#
# The workbook counts each kernel's loads and stores in the PTX of the GPU
# build (on every machine: the build for the GPU needs no GPU) and shows
# them beside the values; part 3 fails unless its loads and stores are v4.
# On a GPU the report also shows how fast each kernel moved memory.
#ko 퍼즐 35: 정렬. 같은 일 output[i] = 2 * a[offset + i] + b[offset + i]를
#ko 세 가지 방법으로 씁니다. 값을 맞히는 것은 쉬운 부분입니다.
#ko
#ko GPU는 전역 메모리를 넓은 조각으로 옮길 때 가장 빠릅니다. 명령
#ko `ld.global.v4.b32` 하나가 float 4개(16바이트, 128비트)를 가져오고,
#ko `ld.global.b32`는 1개를 가져옵니다. 컴파일러는 주소가 16바이트의 배수임을
#ko 증명할 수 있을 때만 넓은 명령을 냅니다. 다른 주소에서의 128비트 접근은
#ko GPU에서 오류이기 때문입니다. 그래서 float 4개를 한 번에 읽는 로드는:
#ko
#ko     unsafe_load[width=4](i)                  정렬 4(float 하나의 정렬):
#ko                                              PTX에는 32비트 로드 4개
#ko     unsafe_load[width=4, alignment=16](i)    주소가 16의 배수라는 약속:
#ko                                              128비트 로드 1개
#ko
#ko     floats      0  1  2  3 | 4  5  6  7 | 8  9 10 11 | 12 ...
#ko     16 B lines  [ line 0  ] [ line 1  ] [ line 2   ]
#ko     offset = 4: offset + 4t의 벡터는 줄의 시작에 놓입니다: 약속이 지켜집니다
#ko     offset = 3: 모든 벡터가 두 줄에 걸칩니다: 약속은 거짓이 됩니다
#ko
#ko 워크북은 GPU 빌드의 PTX에서 커널마다 로드와 저장을 세어(어느 머신에서나:
#ko GPU용 빌드에는 GPU가 필요 없습니다) 값 옆에 보여 줍니다. 파트 3은 로드와
#ko 저장이 v4가 아니면 실패합니다. GPU가 있으면 보고서는 커널마다 메모리를
#ko 얼마나 빨리 옮겼는지도 보여 줍니다.

from max.gpu import thread_idx, block_idx, block_dim
from layout import TileTensor
from layout.tile_layout import row_major

comptime dtype = DType.float32
# The type of a vector of n values laid out one after another.
#ko 값 n개가 차례로 놓인 벡터의 타입.
comptime Vector[n: Int] = type_of(row_major[n]())
# Threads per block.
#ko 블록당 스레드 수.
comptime TPB = 32
# Floats in one 128-bit access, and the bytes its address must be a multiple of.
#ko 128비트 접근 하나에 든 float 수, 그리고 그 주소가 배수여야 하는 바이트 수.
comptime WIDTH = 4
comptime ALIGN = 16


# Part 1: one float per thread. The launch has ceildiv(size, TPB) blocks.
#ko 파트 1: 스레드마다 float 하나. 블록은 ceildiv(size, TPB)개입니다.
def combine_scalar[size: Int, offset: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size + offset], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[size + offset], ImmutAnyOrigin],
):
    # FILL IN: find this thread's element i; inside the output, write
    # 2 * a[offset + i] + b[offset + i] there. (3 lines)
    #ko FILL IN: 이 스레드의 원소 i를 찾고, 출력 안이면 그 자리에
    #ko 2 * a[offset + i] + b[offset + i]를 씁니다. (3줄)
    #| pass
    var i = block_idx.x * block_dim.x + thread_idx.x
    if i < size:
        output[i] = 2 * a[offset + i] + b[offset + i]
    # END FILL IN


# Part 2: WIDTH floats per thread, loaded and stored WIDTH at a time, from an
# `offset` that is not a multiple of WIDTH: the vectors of a and b straddle
# 16-byte lines, so claim no alignment. Thread t owns the outputs
# WIDTH*t .. WIDTH*t + WIDTH - 1; when size is not a multiple of WIDTH, the
# last thread's vector is partly past the end: do those few one at a time.
# The launch has ceildiv(ceildiv(size, WIDTH), TPB) blocks.
#ko 파트 2: 스레드마다 float WIDTH개를 WIDTH개씩 한 번에 읽고 씁니다. `offset`이
#ko WIDTH의 배수가 아니라 a와 b의 벡터는 16바이트 줄에 걸칩니다: 정렬을
#ko 약속하지 마세요. 스레드 t는 출력 WIDTH*t .. WIDTH*t + WIDTH - 1을 맡습니다.
#ko size가 WIDTH의 배수가 아니면 마지막 스레드의 벡터 일부가 끝을 넘습니다:
#ko 그 몇 개는 하나씩 처리합니다. 블록은 ceildiv(ceildiv(size, WIDTH), TPB)개입니다.
def combine_vector[size: Int, offset: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size + offset], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[size + offset], ImmutAnyOrigin],
):
    var i = (block_idx.x * block_dim.x + thread_idx.x) * WIDTH  # this thread's first output
    #ko 이 스레드의 첫 출력
    # FILL IN: a whole vector (i + WIDTH <= size): load WIDTH floats of a and
    # of b with a.ptr.unsafe_load[width=WIDTH](offset + i), and store
    # 2 * va + vb with output.ptr.unsafe_store(i, ...); otherwise, the outputs
    # from i to size - 1 one by one. (about 7 lines)
    #ko FILL IN: 온전한 벡터이면(i + WIDTH <= size) a와 b에서 float WIDTH개를
    #ko a.ptr.unsafe_load[width=WIDTH](offset + i)로 읽고, 2 * va + vb를
    #ko output.ptr.unsafe_store(i, ...)로 저장합니다. 아니면 i부터 size - 1까지의
    #ko 출력을 하나씩 씁니다. (7줄 정도)
    #| pass
    if i + WIDTH <= size:
        var va = a.ptr.unsafe_load[width=WIDTH, alignment=8](offset + i)
        var vb = b.ptr.unsafe_load[width=WIDTH, alignment=8](offset + i)
        output.ptr.unsafe_store(i, 2 * va + vb)
    else:
        for k in range(i, size):
            output[k] = 2 * a[offset + k] + b[offset + k]
    # END FILL IN


# Part 3: part 2 again, but here `offset` is a multiple of WIDTH, so every
# vector of a, b and output starts a 16-byte line (the buffers themselves
# start on one): say so with alignment=ALIGN on the loads and the store, and
# the PTX must show v4 loads and stores.
#ko 파트 3: 파트 2와 같지만 여기서는 `offset`이 WIDTH의 배수라, a, b, output의
#ko 모든 벡터가 16바이트 줄의 시작에 놓입니다(버퍼 자체도 줄의 시작에서
#ko 시작합니다). 로드와 저장에 alignment=ALIGN으로 그렇다고 알리면, PTX에는
#ko v4 로드와 저장이 나와야 합니다.
def combine_aligned[size: Int, offset: Int](
    output: TileTensor[mut=True, dtype, Vector[size], MutAnyOrigin],
    a: TileTensor[mut=False, dtype, Vector[size + offset], ImmutAnyOrigin],
    b: TileTensor[mut=False, dtype, Vector[size + offset], ImmutAnyOrigin],
):
    comptime assert offset % WIDTH == 0, "part 3's offsets are multiples of WIDTH"
    #ko= comptime assert offset % WIDTH == 0, "파트 3의 offset은 WIDTH의 배수입니다"
    var i = (block_idx.x * block_dim.x + thread_idx.x) * WIDTH  # this thread's first output
    #ko 이 스레드의 첫 출력
    # FILL IN: as in part 2, with alignment=ALIGN on both loads and on the
    # store of a whole vector. (about 7 lines)
    #ko FILL IN: 파트 2처럼 하되, 온전한 벡터의 두 로드와 저장에
    #ko alignment=ALIGN을 붙입니다. (7줄 정도)
    #| pass
    if i + WIDTH <= size:
        var va = a.ptr.unsafe_load[width=WIDTH, alignment=ALIGN](offset + i)
        var vb = b.ptr.unsafe_load[width=WIDTH, alignment=ALIGN](offset + i)
        output.ptr.unsafe_store[alignment=ALIGN](i, 2 * va + vb)
    else:
        for k in range(i, size):
            output[k] = 2 * a[offset + k] + b[offset + k]
    # END FILL IN
