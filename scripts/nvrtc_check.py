"""Compiles the addon's NVRTC kernel programs here, without a GPU.

The addon compiles its CUDA kernels at run time with NVRTC, so a source that NVRTC refuses builds
fine with node-gyp and fails only on a GPU machine, at its first launch (b59c907's trunk did: a
generic lambda, which nvcc takes and NVRTC does not). This script pulls each program's
R"CUDA(...)CUDA" strings out of native/src, joins them as the .cc files do (kept in step by hand:
`programs` names each .cc function it mirrors), and compiles each with pip's NVRTC for CUDA 13 (the
GPU machine's; nvidia-cuda-nvrtc in requirements-dev.txt) for sm_90, under define sets that reach
every branch: rows 1 to 4, traced or not, o and down by columns or by rows, the 4B and 0.6B shapes,
each gemv BATCH, head dims 64 to 256.

  .venv/bin/python scripts/nvrtc_check.py     (test/engine/nvrtc-sources.test.ts; bench/device/bundle.sh)

Exit 1 names each program and define set that failed, with NVRTC's log.
"""

import ctypes
import itertools
import os
import re
import site
import sys
from concurrent.futures import ProcessPoolExecutor

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "native", "src")
ARCH = "sm_90"  # the H100's and H200's; the trunk needs 9.0 and up


def raw_string(file: str, name: str) -> str:
    """The R"CUDA(...)CUDA" string assigned to `name` in native/src/`file`."""
    text = open(os.path.join(SRC, file)).read()
    m = re.search(re.escape(name) + r'\s*=\s*R"CUDA\(', text)
    if not m:
        sys.exit(f"nvrtc-check: no R\"CUDA( string named {name} in native/src/{file}: update programs() in scripts/nvrtc_check.py")
    return text[m.end() : text.index(')CUDA"', m.end())]


def nvrtc_library() -> ctypes.CDLL:
    lib = next(
        (d for d in (os.path.join(b, "nvidia", "cu13", "lib") for b in site.getsitepackages()) if os.path.isdir(d)), None
    )
    if lib is None:
        sys.exit(f"nvrtc-check: pip's nvidia-cuda-nvrtc 13.0 is not in {sys.executable}'s packages: run bash scripts/setup.sh")
    # NVRTC opens its builtins library by name at compile time: load it first so that name resolves
    ctypes.CDLL(os.path.join(lib, "libnvrtc-builtins.so.13.0"), mode=ctypes.RTLD_GLOBAL)
    return ctypes.CDLL(os.path.join(lib, "libnvrtc.so.13"))


def compile_program(nvrtc: ctypes.CDLL, name: str, source: str, defines: dict) -> str:
    """NVRTC's log when `source` fails to compile under `defines`, else ''."""
    options = [f"--gpu-architecture={ARCH}".encode(), b"--std=c++17"] + [f"-D{k}={v}".encode() for k, v in defines.items()]
    program = ctypes.c_void_p()
    if nvrtc.nvrtcCreateProgram(ctypes.byref(program), source.encode(), f"{name}.cu".encode(), 0, None, None) != 0:
        return "nvrtcCreateProgram failed"
    result = nvrtc.nvrtcCompileProgram(program, len(options), (ctypes.c_char_p * len(options))(*options))
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(program, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetProgramLog(program, log)
    nvrtc.nvrtcDestroyProgram(ctypes.byref(program))
    return log.value.decode(errors="replace") if result != 0 else ""


def programs():
    """(program, source, define sets) for each NVRTC program the addon builds."""
    helpers = raw_string("nvrtc.cc", "kBf16Helpers")  # nvrtc::withBf16Helpers
    math = raw_string("decode_sources.cc", "kDecodeMath")
    rope = raw_string("decode_sources.cc", "kHeadRope")
    paged = raw_string("paged_attention.cc", "decode_sources::kPagedAttention")
    rows = {"SLICE_RECORD": 36, "MAX_SLICES": 64}  # fused_decode.cc's rowDefines()
    # paged_attention::defines at the default STAGES and kUnroll
    def attention(head_dim: int, group: int) -> dict:
        return {"HEAD_DIM": head_dim, "GROUP": group, "BLOCK_SIZE": 16, "STAGES": 2, "UNROLL": 4}

    # fused_decode.cc rowSource() (gemvKernel: the default BATCH or AGENT_R1_GEMV_BATCH's)
    yield "row kernels", helpers + math + raw_string("fused_decode.cc", "kRowKernels"), [
        dict(rows, **({"BATCH": b} if b else {})) for b in (0, 4, 8, 16)
    ]
    # fused_decode.cc headSource()
    yield "qk_norm_rope_cache", helpers + rope + raw_string("fused_decode.cc", "kHeadKernel"), [
        {"HEAD_DIM": d} for d in (64, 128, 256)
    ]
    # paged_attention.cc kernelsFor (MAX_THREADS: its maxThreads)
    yield "paged_decode_attention", helpers + paged + raw_string("paged_attention.cc", "kKernels"), [
        dict(attention(d, g), MAX_THREADS=256 if g * d > 512 else 512) for d, g in itertools.product((64, 128, 256), (1, 2, 4, 8))
    ]
    # decode_trunk.cc trunkKernel, at layouts near layoutFor's and columnsFor's on a 132-SM card
    trunk = helpers + math + rope + paged + raw_string("decode_trunk.cc", "kTrunk")
    shapes = [  # 4B, 0.6B
        dict(attention(128, 4), HIDDEN=2560, HQ=32, HKV=8, INTER=9728, LAYERS=36, STAGE_BYTES=19456, RING_STAGES=8),
        dict(attention(128, 2), HIDDEN=1024, HQ=16, HKV=8, INTER=3072, LAYERS=28, STAGE_BYTES=16384, RING_STAGES=9),
    ]
    sets = []
    for d, n, traced, columns in itertools.product(shapes, (1, 2, 3, 4), (False, True), (False, True)):
        s = dict(d, ROWS=n, XS_BYTES=-(-n * d["INTER"] * 2 // 128) * 128, CONSUMERS=11)
        if traced:
            s["TRUNK_TRACE"] = 1
        if columns:
            box_rows = -(-d["HIDDEN"] // 132)
            s.update(COLUMNS=1, BOX_ROWS=box_rows, BOX_COLS=256, O_CHUNK_COLS=d["GROUP"] * d["HEAD_DIM"], DOWN_CHUNK_COLS=256)
        sets.append(s)
    yield "decode_trunk", trunk, sets


_nvrtc = None


def _compile(job: tuple) -> str:
    """A worker's compilation of (program, source, defines): NVRTC loaded once a worker."""
    global _nvrtc
    _nvrtc = _nvrtc or nvrtc_library()
    return compile_program(_nvrtc, *job)


def check_all() -> list:
    """Each program's name, define sets and failures ({defines, log}), compiled on every core."""
    nvrtc_library()  # says what is missing before any worker starts
    listed = list(programs())
    jobs = [(name, source, d) for name, source, sets in listed for d in sets]
    with ProcessPoolExecutor(os.cpu_count()) as pool:
        logs = iter(pool.map(_compile, jobs))
        return [
            {"name": name, "sets": len(sets), "failures": [{"defines": d, "log": log} for d in sets if (log := next(logs))]}
            for name, _, sets in listed
        ]


def main() -> int:
    failed = 0
    for p in check_all():
        for f in p["failures"]:
            print(f"nvrtc-check: {p['name']} does not compile for {ARCH} with {f['defines']}:\n{f['log'][:3000]}")
        failed += len(p["failures"])
        print(f"nvrtc-check: {p['name']}: {p['sets'] - len(p['failures'])} of {p['sets']} define sets compile")
    if failed:
        print(f"nvrtc-check: {failed} compilations failed: fix them before the kernels reach a GPU")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
