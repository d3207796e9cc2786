// What the decode trunk (decode_trunk.cc) shares with the paged attention kernel's host side
// (paged_attention.cc): the attention device function's defines and the shared memory it takes.
#pragma once
#ifdef AGENT_R1_CUDA
#include <cstddef>
#include <string>
#include <vector>

namespace agent_r1 {
namespace paged_attention {

// The -D defines decode_sources::kPagedAttention compiles with: HEAD_DIM, GROUP, BLOCK_SIZE and its
// ring's STAGES and UNROLL.
std::vector<std::string> defines(int headDim, int group, int blockSize);

// The shared memory attendPart takes with `warps` warps: the larger of their rings and the merge
// of their half-warps' partial sums, which reuses the rings' memory.
size_t sharedBytes(int headDim, int group, int warps);

}  // namespace paged_attention
}  // namespace agent_r1
#endif
