{
  "variables": {
    "libtorch%": "<!(node find-libtorch.mjs)",
    "cuda%": "<!(node find-libtorch.mjs --cuda)",
    "nccl_include%": "<!(node find-libtorch.mjs --nccl)",
    "cuda_include%": "<!(node find-libtorch.mjs --cuda-include)"
  },
  "targets": [
    {
      "target_name": "agent_r1_native",
      "sources": [
        "src/addon.cc",
        "src/handles.cc",
        "src/dispatch.cc",
        "src/tensor_io.cc",
        "src/autograd.cc",
        "src/device.cc",
        "src/cuda_graph.cc",
        "src/paged_attention.cc",
        "src/fused_decode.cc",
        "src/decode_sources.cc",
        "src/decode_trunk.cc",
        "src/nvrtc.cc",
        "src/threads.cc",
        "src/distributed.cc",
        "src/profiler.cc"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "<(libtorch)/include",
        "<(libtorch)/include/torch/csrc/api/include",
        "gloo-shim"
      ],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "_GLIBCXX_USE_CXX11_ABI=1", "USE_C10D_GLOO"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti", "-std=gnu++17"],
      "cflags_cc": ["-std=c++17", "-fexceptions", "-frtti", "-O2", "-Wno-unused-parameter", "-Wno-deprecated-declarations", "-Wno-c++20-extensions"],
      "libraries": ["-L<(libtorch)/lib", "-Wl,-rpath,<(libtorch)/lib", "-ltorch", "-ltorch_cpu", "-lc10"],
      "conditions": [
        ["cuda==1", {
          "defines": ["AGENT_R1_CUDA=1"],
          "include_dirs": ["<(cuda_include)"],
          "libraries": ["-Wl,--no-as-needed", "-ltorch_cuda", "-lc10_cuda", "-Wl,--as-needed"]
        }],
        ["cuda==1 and nccl_include!=''", {
          "defines": ["AGENT_R1_NCCL=1", "USE_C10D_NCCL"],
          "include_dirs": ["<(nccl_include)"]
        }]
      ]
    }
  ]
}
