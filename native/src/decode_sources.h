// CUDA C device functions that several of the engine's decode kernels share, as NVRTC source
// strings (nvrtc.h): the layered kernels (fused_decode.cc, paged_attention.cc) and the decode trunk
// that runs a whole decode step's layers in one launch (decode_trunk.cc) compile the same functions,
// so both give the same values from the same operations. Each goes after nvrtc::withBf16Helpers' helpers.
#pragma once
#ifdef AGENT_R1_CUDA

namespace agent_r1 {
namespace decode_sources {

// bf16 pair arithmetic as libtorch rounds it (the residual add, the norm's scale and weight,
// silu(gate) * up), 8-value dot products and sums of squares, and stageInput: a matmul's input
// f(x) (x itself, silu(gate) * up, or rms_norm(x + residual) * w) staged in shared memory.
extern const char* const kDecodeMath;

// normRopeHead: one warp's q/k norm and rotate-half RoPE of one head (needs HEAD_DIM defined).
extern const char* const kHeadRope;

// attendPart and mergeSplit: the paged decode attention of one (sequence, KV head, split) and the
// merge of a head's splits (paged_attention.cc; needs its defines: HEAD_DIM, GROUP, BLOCK_SIZE,
// STAGES, UNROLL).
extern const char* const kPagedAttention;

}  // namespace decode_sources
}  // namespace agent_r1
#endif
