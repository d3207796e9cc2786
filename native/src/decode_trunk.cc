// The decode trunk: every layer of a decode step of few rows (a batch of 1 to 4 sequences) in one
// persistent kernel, one block per SM. Such a step reads each weight once and does little else, so
// its time is the weights' bytes over the memory's bandwidth, if the memory never idles. Run as a
// chain of kernels (fused_decode.cc's gemv_rows and the paged attention, 7 a layer) it idles at each
// kernel's start and end and through the attention: on the H200 the Qwen3-4B shape's batch-1 step
// read its weights at 62% of the copy bandwidth (bench/results/h200-kernel-timeline.log: 79 us a
// layer against 48 to read its weights), after many tunings of the kernels themselves.
//
// Here a producer warp of each block streams the block's share of every weight of the step, matmul
// after matmul and layer after layer, into a ring of shared memory with the copy engine
// (cp.async.bulk), whatever the consumers are doing: weights are never written during a step, so
// the copies of the next matmul's rows run during the attention and while blocks wait for each
// other. Eleven consumer warps multiply each row that lands by the matmul's input, staged in shared
// memory (the norm before q/k/v and gate/up, silu(gate) * up before down, as gemv_rows' stageInput
// stages it), with gemv_rows' arithmetic in gemv_rows' order, so a matmul's outputs are gemv_rows'
// bits and the trunk's step is the layered kernels' step, bit for bit (test/engine/cuda.test.ts).
// The phases of a layer hand their outputs on through global memory as tagged words (putTagged: the
// bf16 value and the layer's tag in one 32-bit store), each phase's blocks counted in `counters`
// (one per layer and phase, zeroed before each launch, as are the words):
//   q/k/v   block b takes rows [N b / G, N (b + 1) / G) of the stacked projection (G blocks);
//   attn    (sequence, KV head, split) items over the blocks: attendPart (paged_attention.cc), whose
//           wait polls the item's q/k/v words, norms and rotates its query heads and, in the split
//           that holds the newest token, writes that token's key and value to the cache; the last
//           split of a head to arrive merges the splits (their arrivals fenced: the partial sums are
//           plain floats) and writes the head's words; each head merged counts (for o by rows);
//   o       a KV head's columns at a time (multiplyByColumns): each block stages a head's output as
//           soon as that head is merged (polling its words, no count) and multiplies it by the ring
//           stage that holds those columns of all its rows, while later heads are still attended;
//   down    likewise by chunks of columns of silu(gate) * up (512 at the 4B shape), each as soon as
//           the gate/up blocks that write it are done;
//           o or down by rows as q/k/v, once the phase before is complete, where its chunks cannot be
//           whole boxes of 256 columns within a stage (columnsFor), or by AGENT_R1_DECODE_TRUNK_O=rows
//           or AGENT_R1_DECODE_TRUNK_DOWN=rows;
//   gate/up block b takes intermediate indices [I b / G, I (b + 1) / G), each of its warps the gate
//           and the up row of an index, and writes silu(gate) * up, down's input.
// A block waits for a count with one thread spinning on an acquiring load, the others at a barrier,
// then loads the words, polling again any whose tag is stale: the counts go out without a fence
// (countDone), which saves each phase the 1.4 us its writes took to drain under the weight stream.
// Every block must be resident at once (it waits for the others): the grid is one block per SM, each
// holding nearly all of an SM's shared memory, so no second block fits beside it.
//
// Measured on the H200 (bench/results/h200-decode-trunk.log): the Qwen3-4B shape's batch-1 step
// 379-393 tokens/s (73-75% of the roofline; section 19, 66 us a layer traced); before c8d39ce's row
// loop 372 (71%; section 12) against 364-369 with 8 consumer warps, 352 with fenced counts and plain
// outputs, 326 layered; 68 us a layer traced. Its trace
// (AGENT_R1_DECODE_TRUNK_TRACE=1, bench/trunk-trace.ts, section 11) says where the rest goes: the
// weights take 47 us a layer at the copy bandwidth, and the memory idles through the phases'
// hand-offs (each phase's staging 3.5-4 us, the attention 10 us between the q/k/v and o matmuls)
// because the ring is full of copies in flight when a hand-off begins, so it covers almost none of
// it: a step is the weights' time plus the hand-offs'. Faster consumers
// therefore gain little (they wait for stages to land 7 us a layer already), nor does streaming the
// next weights into L2 through the hand-offs (its reads slow the hand-offs' own: 291-339 tokens/s;
// asked only while every copy has landed, 268-270 against 297 on an H100, section 16),
// nor copying the attention's older keys and values a phase early (370, within noise: the merge, not
// the loads, sets the attention's time). Polling every word with no count saturated L2 (327-353).
// Before the tags (sections 9-10): the consumers' instruction latency looked like the limit; what it
// suggested ran and did not beat 352-365 tokens/s: tensor-core rows (2 MMAs a 512-byte tile), waits
// by only the warps with a row in a stage. Also tried and left off (the log says each):
// fewer copies in flight (2 to 8 stages), a producer that sleeps between polls, splits of 32 tokens,
// __threadfence's fence, a release add: all within 2%; a warp a stage (each warp all of a stage's
// rows): faulted at the 4B shape, as a warp that skips stages may wait for a slot's next use before
// its current one has landed, which a parity wait on the slot's one barrier takes for landed (two
// barriers a slot, even and odd uses, fix it: section 10); two tensor-core consumers: tiles of 16
// rows by 512 values made the consumers fast (the producer waited 18 us a layer) but took 16 copies
// of 1 KiB a stage, and the copy engine's issue rate (about one copy per 50 ns) capped the stream:
// 297 tokens/s; whole rows a stage with one warp a stage (1 to 3 rows of an MMA's 16) left each warp
// a long chain of dependent steps: 215. Section 12: the attention's partial sums as tagged words
// polled by one split instead of the fenced arrival (337: the polls slow the rest), the merge's loads
// batched several values a thread (362-367 against 372 a value at a time), dot8 as two chains of
// products, the row loop's loads batched ahead of its products (351-367). The ring's stages sized for
// whole rows of every matmul (layoutFor; AGENT_R1_DECODE_TRUNK_STAGE_RULE=longest keeps the longest
// row's rule) shortened q/k/v's rows 6.1 -> 4.9 us a layer on an H100 and, with the step's copies as
// kernels (StepInputs), the step by 0.02-0.56% in each of nine pairs on three H100s (sections 22-23); the
// H200, where the hand-offs weigh more, has not measured it. o by KV head (section 24) shortened the
// 4B batch-1 step by 54-96 us (1.6-2.9%) in each of seven pairs on H100s, 82.5 -> 80.7 us a layer
// traced: gate/up's staging waited 8.4 -> 3.5 us, as o's outputs come out as the last head lands; down
// by columns then by 55 us more (1.7%) on the mean of six comparisons with down by rows, shorter in five
// (sections 25-26, two H100s): both together 4.2% on three rounds' means (3.229 ms against 3.371).
#include "handles.h"

#ifdef AGENT_R1_CUDA
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "decode_sources.h"
#include "nvrtc.h"
#include "paged_attention.h"
#endif

namespace agent_r1 {
namespace {

#ifdef AGENT_R1_CUDA

// After kDecodeMath, kHeadRope and kPagedAttention. Shapes come in as -D defines: HIDDEN, HQ, HKV,
// HEAD_DIM, GROUP (HQ / HKV), INTER, LAYERS, ROWS (sequences a step), BLOCK_SIZE (tokens a cache
// block), the attention's STAGES and UNROLL, CONSUMERS (consumer warps: consumers() on the host), and
// the layout of shared memory: RING_STAGES stages of STAGE_BYTES (whole weight rows: one copy a
// stage), then XS_BYTES (a matmul's staged input, or the attention's rings and merge), then the query
// heads.
const char* kTrunk = R"CUDA(
#define QKV_N ((HQ + 2 * HKV) * HEAD_DIM)
#define CONSUMER_THREADS (CONSUMERS * 32)
// the threads of a norm's staging: gemv_rows' block (8 warps), whose partition of the sums of squares
// sets the norm's bits (the rest of the consumers wait for them)
#define NORM_THREADS 256
// a warp's rows of one gate/up stage, at most
#define GU_OWN ((STAGE_BYTES / (2 * HIDDEN) + CONSUMERS - 1) / CONSUMERS)
#define ATT_WARPS 4
#define ATT_THREADS (ATT_WARPS * 32)
// a layer's counters: the heads merged, then the blocks done with o, gate/up and down
#define PHASES 4
#define HEADS_DONE 0
#define O_DONE 1
#define GATE_UP_DONE 2
#define DOWN_DONE 3
// a wait this long means a broken schedule (a block that never arrives): trap rather than hang
#define SPIN_LIMIT_NS 4000000000ull

// One layer's weights and cache: the four matmuls' weights [N, K] (q/k/v, o, gate/up, down) and
// their biases [N] (or null), the input and post-attention norms [HIDDEN], the q/k norms [HQ + HKV,
// HEAD_DIM] (or null), the caches [slots, HKV, HEAD_DIM]. The host lays out its TrunkLayer alike.
struct TrunkLayer {
  const uint4* w[4];
  const bf16* bias[4];
  const uint4* inputNorm;
  const uint4* postNorm;
  const bf16* qkNorm;
  bf16* kc;
  bf16* vc;
};
struct TrunkLayers {
  TrunkLayer l[LAYERS];
};
// With COLUMNS (o or down by columns, multiplyByColumns): each layer's o and down weights as tensor
// maps (cuda.h's CUtensorMap) in boxes of BOX_ROWS rows by BOX_COLS columns, for the copy engine's
// 2-d copies of a chunk of columns of the block's rows
struct __align__(64) TensorMap {
  unsigned long long bytes[16];
};
struct ColumnMaps {
  TensorMap o[LAYERS];
  TensorMap down[LAYERS];
};
// The step's inputs, scratch and outputs. The host lays out its TrunkIo alike. The matmuls' outputs
// that other blocks read are tagged words (putTagged): a bf16 value in the low half, the layer's tag
// (layer + 1) in the high half, in buffers zeroed before each launch.
struct TrunkIo {
  const uint4* x;              // [ROWS, HIDDEN]: the tokens' embeddings
  const long long* positions;  // [ROWS]
  const long long* slots;      // [ROWS]
  const long long* tables;     // [ROWS, W]
  const float* invFreq;        // [HEAD_DIM / 2]
  unsigned* qkv;               // [ROWS, QKV_N], tagged
  bf16* attn;                  // [ROWS, HQ * HEAD_DIM]: the attention's output when it takes one split
  unsigned* attnWords;         // [ROWS, HQ * HEAD_DIM], tagged: the attention's output
  unsigned* o;                 // [ROWS, HIDDEN], tagged
  unsigned* gateUp;            // [ROWS, INTER], tagged: silu(gate) * up
  unsigned* mlp;               // [ROWS, HIDDEN], tagged: a layer's MLP output (but the last layer's)
  uint4* res;                  // [blocks, ROWS, HIDDEN]: each block's own copy of the residual stream
  float* partSums;             // [ROWS, HQ, splits, HEAD_DIM]
  float* partStats;            // [ROWS, HQ, splits, 2]
  bf16* down;                  // [ROWS, HIDDEN]: the last layer's MLP output (the trunk's)
  uint4* resMlp;               // [ROWS, HIDDEN]: the residual stream before it
  int* counters;               // [LAYERS * PHASES + ROWS * HKV]: a layer's counts, a head's splits arrived; zeros
  long long* trace;            // [blocks, LAYERS, TRACE_EVENTS] with TRUNK_TRACE, else null
};

// With TRUNK_TRACE (AGENT_R1_DECODE_TRUNK_TRACE=1): each block's clock (ns) at the steps of each
// layer, for bench/trunk-trace.ts. Events 0-15 by the consumers' thread 0: layer start; q/k/v staging
// begun (it polls the layer before's output), staged, rows done; attention entered its wait, done
// waiting, done; o ready (every head merged), staged, rows done; gate/up staging begun, staged, rows
// done; down staging begun, staged, rows done. 16: ns the producer waited for free stages during the
// layer; 17, 18: its first and last copy of the layer; 19: ns a consumer warp waited for its stages
// to land during the layer (mean over the warps); 20: ns a consumer warp waited at the matmuls' ends
// for the others (mean over the warps: the rows' imbalance between warps).
#define TRACE_EVENTS 21
#ifdef TRUNK_TRACE
#define TRACE(l, e) \
  if (threadIdx.x == 0) io.trace[((size_t)blockIdx.x * LAYERS + (l)) * TRACE_EVENTS + (e)] = (long long)nowNs()
#else
#define TRACE(l, e)
#endif

__device__ __forceinline__ unsigned sharedAddress(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ unsigned long long nowNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void mbarInit(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ bool mbarTryWait(unsigned bar, unsigned parity) {
  unsigned done;
  asm volatile(
      "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done;
}

// until the barrier's phase of this parity has completed
__device__ __forceinline__ void mbarWait(unsigned bar, unsigned parity) {
  if (mbarTryWait(bar, parity)) return;
  const unsigned long long t0 = nowNs();
  while (!mbarTryWait(bar, parity))
    if (nowNs() - t0 > SPIN_LIMIT_NS) __trap();
}

__device__ __forceinline__ void mbarArrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

// `bytes` from global src to shared dst by the copy engine, completing on barrier bar (armed to expect
// them); `policy`: the L2 policy of the reads
__device__ __forceinline__ void bulkCopy(unsigned dst, const void* src, unsigned bytes, unsigned bar,
                                         unsigned long long policy) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(
          dst),
      "l"(src), "r"(bytes), "r"(bar), "l"(policy)
      : "memory");
}

// o's and down's chunks of columns (multiplyByColumns; COLUMNS), 0 for that matmul by rows
#ifndef O_CHUNK_COLS
#define O_CHUNK_COLS 0
#endif
#ifndef DOWN_CHUNK_COLS
#define DOWN_CHUNK_COLS 0
#endif
#ifdef COLUMNS
// the box of `map` at column x, row y to shared memory dst, completing on barrier bar
__device__ __forceinline__ void tensorCopy(unsigned dst, const TensorMap* map, int x, int y, unsigned bar,
                                           unsigned long long policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%2, "
      "%3}], [%4], %5;" ::"r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(bar), "l"(policy)
      : "memory");
}
#define BOX_BYTES (BOX_ROWS * BOX_COLS * 2)
// a warp's rows of the block's rows of o or down (HIDDEN of them: BOX_ROWS a block at most), at most
#define BOX_OWN ((BOX_ROWS + CONSUMERS - 1) / CONSUMERS)
#endif

__device__ __forceinline__ int loadAcquire(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// one thread: until *count reaches target
__device__ __forceinline__ void spinUntil(const int* count, int target) {
  if (loadAcquire(count) >= target) return;
  const unsigned long long t0 = nowNs();
  while (loadAcquire(count) < target)
    if (nowNs() - t0 > SPIN_LIMIT_NS) __trap();
}

// An acquire-release fence at GPU scope (MEMBAR.ALL.GPU): what the release and acquire patterns here
// need. __threadfence's sequentially consistent one (MEMBAR.SC.GPU) measured no faster nor slower
// (bench/results/h200-decode-trunk.log, section 8: 1.4 us a count either way, its writes' drain).
__device__ __forceinline__ void gpuFence() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }

// barrier 1: the consumer warps; barrier 2: the attention's warps (0 is __syncthreads, all warps)
__device__ __forceinline__ void consumerSync() { asm volatile("bar.sync 1, %0;" ::"n"(CONSUMER_THREADS) : "memory"); }
// barrier 3: the norm stagings' threads
__device__ __forceinline__ void normSync() { asm volatile("bar.sync 3, %0;" ::"n"(NORM_THREADS) : "memory"); }
__device__ __forceinline__ void attentionSync() { asm volatile("bar.sync 2, %0;" ::"n"(ATT_THREADS) : "memory"); }

// the consumers, once *count reaches target
__device__ __forceinline__ void consumersWait(const int* count, int target) {
  if (threadIdx.x == 0) spinUntil(count, target);
  consumerSync();
}

// One thread counts its block done with a phase whose outputs went out as tagged words: without a
// fence (which would wait for the block's writes to drain, 1.4 us a count under the weight stream,
// bench/results/h200-decode-trunk.log section 8), as the count only says when to start loading the
// words; a word that has not landed yet carries a stale tag and is loaded again (pollTagged).
__device__ __forceinline__ void countDone(int* count) {
  asm volatile("red.relaxed.gpu.global.add.s32 [%0], 1;" ::"l"(count) : "memory");
}

// The hand-off between phases. A matmul's output value goes out as one 32-bit word, the bf16 value
// and the layer's tag (layer + 1), so a block that reads the word with the tag has the value, with no
// fence between the writes and the count that says when to read them (countDone). The buffers are
// zeroed before each launch and each layer's tag differs from the one before, so a stale word never
// passes for a fresh one. Each block still ends a phase's reads before any block writes that phase's
// words of the next layer into the buffer they share: those writes wait, through the counts and
// words of the phases between, for every block to be past the reads.
__device__ __forceinline__ void putTagged(unsigned* p, bf16 v, unsigned tag) {
  asm volatile("st.relaxed.gpu.global.b32 [%0], %1;" ::"l"(p), "r"((unsigned)v | (tag << 16)) : "memory");
}

__device__ __forceinline__ uint4 loadRelaxed(const uint4* p) {
  uint4 v;
  asm volatile("ld.relaxed.gpu.global.v4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}

// whether 4 words all carry the tag
__device__ __forceinline__ bool hasTag(const uint4& v, unsigned tag) {
  const unsigned t = tag << 16;
  return (((v.x ^ t) | (v.y ^ t) | (v.z ^ t) | (v.w ^ t)) >> 16) == 0;
}

// v[i] = base[at[i]] for the at[i] >= 0 (uint4 of tagged words), loaded again until each carries the tag
template <int N>
__device__ __forceinline__ void pollTagged(uint4 (&v)[N], const uint4* base, const int (&at)[N], unsigned tag) {
#pragma unroll
  for (int i = 0; i < N; i++)
    if (at[i] >= 0) v[i] = loadRelaxed(base + at[i]);
  unsigned long long t0 = 0;
  for (;;) {
    bool all = true;
#pragma unroll
    for (int i = 0; i < N; i++) all &= at[i] < 0 || hasTag(v[i], tag);
    if (all) return;
    if (!t0)
      t0 = nowNs();
    else if (nowNs() - t0 > SPIN_LIMIT_NS)
      __trap();
#pragma unroll
    for (int i = 0; i < N; i++)
      if (at[i] >= 0 && !hasTag(v[i], tag)) v[i] = loadRelaxed(base + at[i]);
  }
}

// the 8 values of two uint4 of tagged words as 4 bf16 pairs
__device__ __forceinline__ uint4 untag(const uint4& a, const uint4& b) {
  return make_uint4((a.x & 0xffffu) | (a.y << 16), (a.z & 0xffffu) | (a.w << 16), (b.x & 0xffffu) | (b.y << 16),
                    (b.z & 0xffffu) | (b.w << 16));
}

// One warp: a head of tagged words [HEAD_DIM] to dst [HEAD_DIM] (bf16), once they carry the tag
__device__ __forceinline__ void fetchHead(const unsigned* src, bf16* dst, unsigned tag, int lane) {
  for (int i = lane; i < HEAD_DIM / 4; i += 32) {
    uint4 v[1];
    const int at[1] = {i};
    pollTagged(v, reinterpret_cast<const uint4*>(src), at, tag);
    *reinterpret_cast<uint2*>(dst + 4 * i) = make_uint2((v[0].x & 0xffffu) | (v[0].y << 16),
                                                        (v[0].z & 0xffffu) | (v[0].w << 16));
  }
  __syncwarp();
}

// The consumers: xs [ROWS, HIDDEN / 8] = rms_norm(r) * normW with r = x + the block's residual
// stream res (x alone when `first`), which r then replaces (and, with resOut, goes there too); x the
// tagged words `words` of the phase before, or the plain embeddings `plain`. stageInput's mode 2 in
// its order of operations, so its bits: the first NORM_THREADS threads (gemv_rows' block) stage it,
// each thread entries tid + k NORM_THREADS in both stagings of a layer, so it reads only the residual
// entries it wrote itself. The norm's weights are loaded with the input, and read again from L1 once
// the sums of squares are in.
__device__ __forceinline__ void stageNormed(uint4* xs, const unsigned* words, const uint4* plain, uint4* res,
                                            bool first, const uint4* normW, uint4* resOut, unsigned tag, float eps,
                                            float (*partial)[8]) {
  const int tid = threadIdx.x, chunks = HIDDEN / 8, total = ROWS * chunks;
  if (tid < NORM_THREADS) {
    float ss[4] = {0.f, 0.f, 0.f, 0.f};
    for (int base = tid; base < total; base += 2 * NORM_THREADS) {
      uint4 v[4], r[2];
      int at[4];
#pragma unroll
      for (int j = 0; j < 2; j++) {
        const int i = base + j * NORM_THREADS;
        const bool in = i < total;
        at[2 * j] = in && words ? 2 * i : -1;
        at[2 * j + 1] = in && words ? 2 * i + 1 : -1;
        if (in) {
          asm volatile("prefetch.global.L1 [%0];" ::"l"(normW + i % chunks));  // for the second pass
          if (!words) v[2 * j] = plain[i];
          if (!first) r[j] = res[i];
        }
      }
      if (words) pollTagged(v, reinterpret_cast<const uint4*>(words), at, tag);
#pragma unroll
      for (int j = 0; j < 2; j++) {
        const int i = base + j * NORM_THREADS;
        if (i >= total) continue;
        uint4 x = words ? untag(v[2 * j], v[2 * j + 1]) : v[2 * j];
        if (!first) x = addPairs(x, r[j]);
        res[i] = x;
        if (resOut) resOut[i] = x;
        xs[i] = x;
        addSquares(ss, x, i / chunks);
      }
    }
    float inv[4];
    rmsInverses(ss, inv, partial, tid, NORM_THREADS / 32, chunks * 8, eps, [] { normSync(); });
    for (int i = tid; i < total; i += NORM_THREADS) {
      const int m = i / chunks;
      xs[i] = normPairs(xs[i], __ldg(normW + i % chunks), m == 0 ? inv[0] : m == 1 ? inv[1] : m == 2 ? inv[2] : inv[3]);
    }
  }
  consumerSync();
}

// The consumers: xs [ROWS, chunks] = the tagged words [ROWS, 8 chunks] (stageInput's mode 0), two
// entries a thread at once
__device__ __forceinline__ void stageTagged(uint4* xs, const unsigned* words, int chunks, unsigned tag) {
  const int total = ROWS * chunks;
  for (int base = threadIdx.x; base < total; base += 2 * CONSUMER_THREADS) {
    uint4 v[4];
    int at[4];
#pragma unroll
    for (int j = 0; j < 2; j++) {
      const int i = base + j * CONSUMER_THREADS;
      at[2 * j] = i < total ? 2 * i : -1;
      at[2 * j + 1] = i < total ? 2 * i + 1 : -1;
    }
    pollTagged(v, reinterpret_cast<const uint4*>(words), at, tag);
#pragma unroll
    for (int j = 0; j < 2; j++)
      if (at[2 * j] >= 0) xs[base + j * CONSUMER_THREADS] = untag(v[2 * j], v[2 * j + 1]);
  }
  consumerSync();
}

// Matmul t of a layer (0 q/k/v, 1 o, 2 gate/up, 3 down): its weight [N, K] and the rows of it this
// block takes, rowsPerStage of them a ring stage (one copy a stage)
// paired (gate/up): the block takes intermediate indices [r0, r1), each stage's gate rows followed by
// a stage of the same indices' up rows (INTER rows on), both by the same warp, which then outputs
// silu(gate) * up: the down matmul's input, staged without another pass over gate and up.
struct Matmul {
  const uint4* w;
  int N, K, r0, r1, rowsPerStage;
  bool paired;
};

__device__ __forceinline__ Matmul matmulOf(const TrunkLayer& layer, int t) {
  Matmul m;
  m.w = layer.w[t];
  m.N = t == 0 ? QKV_N : t == 2 ? 2 * INTER : HIDDEN;
  m.K = t == 1 ? HQ * HEAD_DIM : t == 3 ? INTER : HIDDEN;
  m.paired = t == 2;
  const int n = m.paired ? INTER : m.N;
  m.r0 = (int)((long long)n * blockIdx.x / gridDim.x);
  m.r1 = (int)((long long)n * (blockIdx.x + 1) / gridDim.x);
  m.rowsPerStage = STAGE_BYTES / (m.K * 2);
  return m;
}

// The producer (one thread): every ring stage of the step in the consumers' order, each once the
// consumers are done with what the stage held before. Weights are read once a step: evicted first
// from L2, which keeps the activations and the cache.
__device__ void produce(const TrunkLayers& layers, const void* columnMaps, char* ring, unsigned full, unsigned empty,
                        long long* trace) {
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  unsigned k = 0;
  for (int l = 0; l < LAYERS; l++) {
#ifdef TRUNK_TRACE
    long long* at = trace + ((size_t)blockIdx.x * LAYERS + l) * TRACE_EVENTS;
    unsigned long long waited = 0;
    at[17] = (long long)nowNs();
#endif
    // stage k's slot, once the consumers are done with what it held, armed to expect `bytes`
    const auto claim = [&](unsigned k, unsigned bytes) {
      const unsigned slot = k % RING_STAGES, use = k / RING_STAGES;
#ifdef TRUNK_TRACE
      const unsigned long long t0 = nowNs();
#endif
      if (use > 0) mbarWait(empty + 8 * slot, (use - 1) & 1);
#ifdef TRUNK_TRACE
      waited += nowNs() - t0;
#endif
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(full + 8 * slot), "r"(bytes)
                   : "memory");
      return slot;
    };
    for (int t = 0; t < 4; t++) {
      const Matmul m = matmulOf(layers.l[l], t);
#ifdef COLUMNS
      // o or down by columns: a stage a chunk of `cols` columns of every row of the block's
      const int cols = t == 1 ? O_CHUNK_COLS : t == 3 ? DOWN_CHUNK_COLS : 0;
      if (cols) {
        const ColumnMaps* maps = reinterpret_cast<const ColumnMaps*>(columnMaps);
        const TensorMap* map = (t == 1 ? maps->o : maps->down) + l;
        for (int h = 0; h < m.K / cols; h++, k++) {
          const unsigned slot = claim(k, cols / BOX_COLS * BOX_BYTES);
          for (int box = 0; box < cols / BOX_COLS; box++)
            tensorCopy(sharedAddress(ring + (size_t)slot * STAGE_BYTES + box * BOX_BYTES), map,
                       h * cols + box * BOX_COLS, m.r0, full + 8 * slot, policy);
        }
        continue;
      }
#endif
      for (int r = m.r0; r < m.r1; r += m.rowsPerStage) {
        for (int half = 0; half < (m.paired ? 2 : 1); half++, k++) {
          const unsigned bytes = (unsigned)(min(m.rowsPerStage, m.r1 - r) * m.K * 2);
          const unsigned slot = claim(k, bytes);
          bulkCopy(sharedAddress(ring + (size_t)slot * STAGE_BYTES), m.w + (size_t)(half * INTER + r) * (m.K / 8),
                   bytes, full + 8 * slot, policy);
        }
      }
    }
#ifdef TRUNK_TRACE
    at[16] = (long long)waited;
    at[18] = (long long)nowNs();
#endif
  }
}

// The consumers: until the ring stage of barrier `bar` has landed (the phase of this parity), the ns
// waited added to `waited` with TRUNK_TRACE
__device__ __forceinline__ void waitLanded(unsigned bar, unsigned parity, unsigned long long& waited) {
#ifdef TRUNK_TRACE
  const unsigned long long t0 = nowNs();
  mbarWait(bar, parity);
  waited += nowNs() - t0;
#else
  mbarWait(bar, parity);
#endif
}

// The consumers' share of matmul m: out [ROWS, N] = xs [ROWS, K] W^T (+ bias), to `plain` or else as
// words of `tag` to `tagged`, row by row from the ring (warp w takes the block's rows j with
// j % CONSUMERS == w, each in gemv_rows' order); stage k onwards. Every warp waits for every stage
// and then releases it, so a release never runs ahead of the copy it frees the stage for.
__device__ __forceinline__ void multiply(const Matmul& m, const bf16* bias, unsigned* tagged, unsigned tag, bf16* plain,
                                         const uint4* xs, const char* ring, unsigned full, unsigned empty, unsigned& k,
                                         long long* landedWait) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, chunks = m.K / 8;
  unsigned long long waited = 0;  // ns waited for stages to land (TRUNK_TRACE's)
  bf16 gate[GU_OWN][ROWS];  // lane 0's: the gate values of its rows of a paired stage
  // the stage's slot and phase parity, and this warp's first row of each stage (then every
  // CONSUMERS-th), carried from stage to stage: no division a stage (with a remainder by
  // CONSUMERS a stage, o's rows took 3.59 us a layer against 3.38 on the H100, and a test of every
  // row by every warp 4.3: bench/results/h200-decode-trunk.log sections 16 and 17)
  unsigned slot = k % RING_STAGES, parity = (k / RING_STAGES) & 1;
  int first = warp;
  const int firstStep = m.rowsPerStage % CONSUMERS;
  for (int r = m.r0; r < m.r1; r += m.rowsPerStage) {
    for (int half = 0; half < (m.paired ? 2 : 1); half++, k++) {
      waitLanded(full + 8 * slot, parity, waited);
      const int rows = min(m.rowsPerStage, m.r1 - r);
      // own: the row's index among this warp's rows of the stage (gate's first index)
      for (int i = first, own = 0; i < rows; i += CONSUMERS, own++) {
        const uint4* w = reinterpret_cast<const uint4*>(ring + (size_t)slot * STAGE_BYTES) + (size_t)i * chunks;
        float acc[ROWS];
#pragma unroll
        for (int j = 0; j < ROWS; j++) acc[j] = 0.f;
#pragma unroll 4
        for (int c = lane; c < chunks; c += 32) {
          const uint4 wv = w[c];
#pragma unroll
          for (int j = 0; j < ROWS; j++) acc[j] += dot8(wv, xs[j * chunks + c]);
        }
#pragma unroll
        for (int j = 0; j < ROWS; j++) acc[j] = warpSum(acc[j]);
        if (lane == 0) {
          const int n = half * INTER + r + i;  // the weight row
          const float b = bias ? bf(bias[n]) : 0.f;
#pragma unroll
          for (int j = 0; j < ROWS; j++) {
            const bf16 v = toBf16(acc[j] + b);
            if (m.paired && half == 0)
              gate[own][j] = v;
            else if (m.paired)
              putTagged(tagged + (size_t)j * INTER + r + i, siluMul(gate[own][j], v), tag);
            else if (plain)
              plain[(size_t)j * m.N + n] = v;
            else
              putTagged(tagged + (size_t)j * m.N + n, v, tag);
          }
        }
      }
      __syncwarp();
      if (lane == 0) mbarArrive(empty + 8 * slot);
      if (++slot == RING_STAGES) slot = 0, parity ^= 1;
    }
    if ((first -= firstStep) < 0) first += CONSUMERS;
  }
#ifdef TRUNK_TRACE
  if (lane == 0) atomicAdd(reinterpret_cast<unsigned long long*>(landedWait), waited / CONSUMERS);
#endif
}

#ifdef COLUMNS
// The consumers' o or down by columns: out [ROWS, HIDDEN] = in [ROWS, K] W^T (+ bias), in K / COLS
// chunks of COLS columns (o: a KV head's query heads; down: COLS of the intermediate size). Each chunk
// of the input is staged from the tagged words `words` as soon as they carry the tag (polling them:
// no count of the blocks that write them), then multiplied by the ring stage that holds those columns
// of every row of the block's (COLS / BOX_COLS boxes of BOX_ROWS rows by BOX_COLS columns), while the
// later chunks are still being written. A lane adds its products of chunk h's columns c = h COLS / 8 +
// lane + 32 i (8 values each) onto its sums of the chunks before, so it adds the same products in the
// same order as multiply (gemv_rows' order, c = lane + 32 i over the whole row; COLS is a multiple of
// 256), and the warp sums once at the end: the outputs are multiply's bits. To `plain`, or else as
// words of `tag` to `tagged`.
template <int COLS>
__device__ __forceinline__ void multiplyByColumns(const Matmul& m, const bf16* bias, unsigned* tagged, bf16* plain,
                                                  unsigned tag, const unsigned* words, uint4* xs, const char* ring,
                                                  unsigned full, unsigned empty, unsigned& k, long long* landedWait) {
  constexpr int CH = COLS / 8;  // a chunk's uint4 a row
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, K = m.K, chunks = K / 8, r0 = m.r0, rows = m.r1 - m.r0;
  unsigned long long waited = 0;  // ns waited for stages to land (TRUNK_TRACE's)
  float acc[BOX_OWN][ROWS];
#pragma unroll
  for (int o = 0; o < BOX_OWN; o++)
#pragma unroll
    for (int j = 0; j < ROWS; j++) acc[o][j] = 0.f;
  unsigned slot = k % RING_STAGES, parity = (k / RING_STAGES) & 1;
  for (int h = 0; h < K / COLS; h++, k++) {
    for (int e = threadIdx.x; e < ROWS * CH; e += CONSUMER_THREADS) {
      const int i = (e / CH) * chunks + h * CH + e % CH;
      uint4 v[2];
      const int at[2] = {2 * i, 2 * i + 1};
      pollTagged(v, reinterpret_cast<const uint4*>(words), at, tag);
      xs[i] = untag(v[0], v[1]);
    }
    consumerSync();
    waitLanded(full + 8 * slot, parity, waited);
    const char* stage = ring + (size_t)slot * STAGE_BYTES;
#pragma unroll
    for (int o = 0; o < BOX_OWN; o++) {
      const int i = warp + o * CONSUMERS;
      if (i >= rows) break;
#pragma unroll
      for (int c = lane; c < CH; c += 32) {
        const uint4 wv = reinterpret_cast<const uint4*>(stage + (c / (BOX_COLS / 8)) * BOX_BYTES +
                                                        (size_t)i * BOX_COLS * 2)[c % (BOX_COLS / 8)];
#pragma unroll
        for (int j = 0; j < ROWS; j++) acc[o][j] += dot8(wv, xs[j * chunks + h * CH + c]);
      }
    }
    __syncwarp();
    if (lane == 0) mbarArrive(empty + 8 * slot);
    if (++slot == RING_STAGES) slot = 0, parity ^= 1;
  }
#pragma unroll
  for (int o = 0; o < BOX_OWN; o++) {
    const int i = warp + o * CONSUMERS;
    if (i >= rows) break;
#pragma unroll
    for (int j = 0; j < ROWS; j++) acc[o][j] = warpSum(acc[o][j]);
    if (lane == 0) {
      const int n = r0 + i;
      const float b = bias ? bf(bias[n]) : 0.f;
#pragma unroll
      for (int j = 0; j < ROWS; j++) {
        const bf16 v = toBf16(acc[o][j] + b);
        if (plain)
          plain[(size_t)j * HIDDEN + n] = v;
        else
          putTagged(tagged + (size_t)j * HIDDEN + n, v, tag);
      }
    }
  }
#ifdef TRUNK_TRACE
  if (lane == 0) atomicAdd(reinterpret_cast<unsigned long long*>(landedWait), waited / CONSUMERS);
#endif
}
#endif

extern "C" __global__ void __launch_bounds__(CONSUMER_THREADS + 32, 1)
    decode_trunk(const __grid_constant__ TrunkLayers layers, const __grid_constant__ TrunkIo io, int W, int splits,
                 float eps, float scale
#ifdef COLUMNS
                 ,
                 const __grid_constant__ ColumnMaps columnMaps
#endif
    ) {
  extern __shared__ __align__(128) char smem[];
  char* ring = smem;
  uint4* xs = reinterpret_cast<uint4*>(smem + (size_t)RING_STAGES * STAGE_BYTES);
  float* attShared = reinterpret_cast<float*>(xs);  // the attention's, between matmuls
  bf16* qs = reinterpret_cast<bf16*>(smem + (size_t)RING_STAGES * STAGE_BYTES + XS_BYTES);
  unsigned long long* bars =
      reinterpret_cast<unsigned long long*>(smem + (size_t)RING_STAGES * STAGE_BYTES + XS_BYTES + GROUP * HEAD_DIM * 2);
  const unsigned full = sharedAddress(bars), empty = sharedAddress(bars + RING_STAGES);
  __shared__ float partial[4][8];
  __shared__ int lastSplit;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (threadIdx.x == 0) {
    for (int s = 0; s < RING_STAGES; s++) {
      mbarInit(full + 8 * s, 1);
      mbarInit(empty + 8 * s, CONSUMERS);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (warp == CONSUMERS) {
#ifdef COLUMNS
    if (lane == 0) produce(layers, &columnMaps, ring, full, empty, io.trace);
#else
    if (lane == 0) produce(layers, nullptr, ring, full, empty, io.trace);
#endif
    return;
  }
  // everything below reads what the kernels before wrote (the embeddings, the zeroed counters)
  depWait();
  const int G = gridDim.x;
  unsigned k = 0;
  for (int l = 0; l < LAYERS; l++) {
    const TrunkLayer& L = layers.l[l];
    const unsigned tag = l + 1;
    uint4* res = io.res + (size_t)blockIdx.x * ROWS * (HIDDEN / 8);
    int* count = io.counters + l * PHASES;
#ifdef TRUNK_TRACE
    // the layer's events: the consumers' ns waited for stages to land (19) and idle at the matmuls' ends (20)
    long long* events = io.trace + ((size_t)blockIdx.x * LAYERS + l) * TRACE_EVENTS;
    long long* landedWait = events + 19;
#else
    long long* landedWait = nullptr;
#endif
    // the end of a matmul of the layer (its input staged in xs or polled chunk by chunk; trace event e
    // when it began): once the consumers have done their share, the block counts done with phase
    // `done` (none when < 0); trace event e + 1. (Not a helper taking the matmul as a generic lambda:
    // NVRTC takes a generic lambda's operator() for host code and refuses to compile it.)
    const auto phaseEnd = [&](int e, int done) {
#ifdef TRUNK_TRACE
      const unsigned long long finished = nowNs();
#endif
      consumerSync();  // before xs is written again
#ifdef TRUNK_TRACE
      if (lane == 0) atomicAdd(reinterpret_cast<unsigned long long*>(events + 20), (nowNs() - finished) / CONSUMERS);
#endif
      if (done >= 0 && threadIdx.x == 0) countDone(count + done);
      TRACE(l, e + 1);
    };
    // matmul t by rows into `tagged` (or `plain`), trace events e, e + 1
    const auto rowsPhase = [&](int t, unsigned* tagged, bf16* plain, int done, int e) {
      TRACE(l, e);
      multiply(matmulOf(L, t), L.bias[t], tagged, tag, plain, xs, ring, full, empty, k, landedWait);
      phaseEnd(e, done);
    };
    TRACE(l, 0);
#ifdef TRUNK_TRACE
    if (threadIdx.x == 0) events[19] = events[20] = 0;
#endif
    // q/k/v of rms_norm(x + residual): the embeddings alone at layer 0
    TRACE(l, 1);
    if (l > 0) consumersWait(count - PHASES + DOWN_DONE, G);
    stageNormed(xs, l == 0 ? nullptr : io.mlp, io.x, res, l == 0, L.inputNorm, nullptr, tag - 1, eps, partial);
    rowsPhase(0, io.qkv, nullptr, -1, 2);
    // attention: items (sequence b, KV head h, split) by the first ATT_WARPS warps
    for (int item = blockIdx.x; item < ROWS * HKV * splits && warp < ATT_WARPS; item += G) {
      const int split = item % splits, head = item / splits, h = head % HKV, b = head / HKV;
      const auto ready = [&](bool holdsNewest) {
        TRACE(l, 4);
        const unsigned* row = io.qkv + (size_t)b * QKV_N;
        const float pos = (float)io.positions[b];
        for (int g = warp; g < GROUP; g += ATT_WARPS) {
          const int qh = h * GROUP + g;
          fetchHead(row + (size_t)qh * HEAD_DIM, qs + g * HEAD_DIM, tag, lane);
          normRopeHead(qs + g * HEAD_DIM, L.qkNorm ? L.qkNorm + (size_t)qh * HEAD_DIM : nullptr, pos, io.invFreq,
                       qs + g * HEAD_DIM, lane, eps);
        }
        if (holdsNewest) {  // the newest token's key and value, written to the cache once
          const size_t at = ((size_t)io.slots[b] * HKV + h) * HEAD_DIM;
          if (warp == 0) {
            fetchHead(row + (size_t)(HQ + h) * HEAD_DIM, L.kc + at, tag, lane);
            normRopeHead(L.kc + at, L.qkNorm ? L.qkNorm + (size_t)(HQ + h) * HEAD_DIM : nullptr, pos, io.invFreq,
                         L.kc + at, lane, eps);
          } else if (warp == 1) {
            fetchHead(row + (size_t)(HQ + HKV + h) * HEAD_DIM, L.vc + at, tag, lane);
          }
          __threadfence_block();  // read back by this block's warps, the copies' L2 reads included
        }
        attentionSync();
        TRACE(l, 5);
      };
      attendPart(qs, L.kc, L.vc, io.tables, io.positions, W, b, h, HKV, scale, split, splits, io.attn, io.partSums,
                 io.partStats, attShared, threadIdx.x, ATT_THREADS, ready, [] { attentionSync(); });
      attentionSync();
      if (splits > 1) {
        // the head's last split to arrive merges them (and sets the arrivals back to 0 for the next
        // layer); the fences on both sides of the arrival order the partial sums' writes and reads
        if (threadIdx.x == 0) {
          int* arrivals = io.counters + LAYERS * PHASES + head;
          gpuFence();
          lastSplit = atomicAdd(arrivals, 1) == splits - 1;
          if (lastSplit) {
            *arrivals = 0;
            gpuFence();
          }
        }
        attentionSync();
        if (!lastSplit) continue;
      }
      // the heads' outputs as tagged words: merged from the splits, or as attendPart wrote them (plain,
      // read back by the threads of the block that wrote them)
      for (int e = threadIdx.x; e < GROUP * HEAD_DIM; e += ATT_THREADS) {
        const int g = e / HEAD_DIM, d = e % HEAD_DIM;
        const size_t qh = (size_t)b * HQ + h * GROUP + g;
        const bf16 v =
            splits > 1
                ? toBf16(mergeSplit(io.partStats + 2 * qh * splits, io.partSums + qh * splits * HEAD_DIM, splits, d))
                : io.attn[qh * HEAD_DIM + d];
        putTagged(io.attnWords + qh * HEAD_DIM + d, v, tag);
      }
      attentionSync();
#if !O_CHUNK_COLS
      if (threadIdx.x == 0) countDone(count + HEADS_DONE);  // o by rows waits for every head's
#endif
      TRACE(l, 6);
    }
#if O_CHUNK_COLS
    // o of the attention's output, a KV head at a time as each is merged (once this block's attention
    // warps are done with xs)
    consumerSync();
    TRACE(l, 7);
    TRACE(l, 8);
    multiplyByColumns<O_CHUNK_COLS>(matmulOf(L, 1), L.bias[1], io.o, nullptr, tag, io.attnWords, xs, ring, full,
                                    empty, k, landedWait);
    phaseEnd(8, O_DONE);
#else
    // o of the attention's output, once every head is merged
    consumersWait(count + HEADS_DONE, ROWS * HKV);
    TRACE(l, 7);
    stageTagged(xs, io.attnWords, HQ * HEAD_DIM / 8, tag);
    rowsPhase(1, io.o, nullptr, O_DONE, 8);
#endif
    // gate/up of rms_norm(o + residual)
    TRACE(l, 10);
    consumersWait(count + O_DONE, G);
    stageNormed(xs, io.o, nullptr, res, false, L.postNorm, l == LAYERS - 1 && blockIdx.x == 0 ? io.resMlp : nullptr,
                tag, eps, partial);
    // (down by columns polls gate/up's words, no count)
    rowsPhase(2, io.gateUp, nullptr, DOWN_CHUNK_COLS ? -1 : GATE_UP_DONE, 11);
    // down of silu(gate) * up: the last layer's plain, the trunk's output
    TRACE(l, 13);
#if DOWN_CHUNK_COLS
    // by columns, each chunk of silu(gate) * up as soon as the blocks that write it are done
    TRACE(l, 14);
    if (l == LAYERS - 1) depLaunchNext();  // the final norm may start its launch
    multiplyByColumns<DOWN_CHUNK_COLS>(matmulOf(L, 3), L.bias[3], io.mlp, l == LAYERS - 1 ? io.down : nullptr, tag,
                                       io.gateUp, xs, ring, full, empty, k, landedWait);
    phaseEnd(14, DOWN_DONE);
#else
    consumersWait(count + GATE_UP_DONE, G);
    stageTagged(xs, io.gateUp, INTER / 8, tag);
    if (l == LAYERS - 1) depLaunchNext();  // the final norm may start its launch
    rowsPhase(3, l == LAYERS - 1 ? nullptr : io.mlp, l == LAYERS - 1 ? io.down : nullptr, DOWN_DONE, 14);
#endif
  }
}
)CUDA";


const char* kWho = "decodeTrunk";

// The kernel's TrunkLayer and TrunkIo, as the host lays them out for the launch
struct TrunkLayer {
  const void* w[4];
  const void* bias[4];
  const void* inputNorm;
  const void* postNorm;
  const void* qkNorm;
  void* kc;
  void* vc;
};
struct TrunkIo {
  const void* x;
  const void* positions;
  const void* slots;
  const void* tables;
  const void* invFreq;
  void* qkv;
  void* attn;
  void* attnWords;
  void* o;
  void* gateUp;
  void* mlp;
  void* res;
  void* partSums;
  void* partStats;
  void* down;
  void* resMlp;
  void* counters;
  void* trace;
};
static_assert(sizeof(TrunkLayer) == 13 * 8 && sizeof(TrunkIo) == 18 * 8, "the kernel's structs are all pointers");

// kTrunk's CONSUMERS: 11, or AGENT_R1_DECODE_TRUNK_CONSUMERS=8 (to compare in the benches). A block
// of 9 warps (8 consumers and the producer) already leaves each thread no more registers than one of
// 12: the register file is split among the SM's 4 schedulers, and one of them holds 3 of the 9 warps
// (168 registers a thread either way), so 3 more consumers come free. Measured on the H200
// (bench/results/h200-decode-trunk.log, section 12): the 4B shape's batch-1 step 374, 367 and 368
// tokens/s against 369, 365 and 364 with 8, each pair in one call; the gate/up rows, which wait on the
// memory, take 22.9 us a layer against 24.5. The rows that landed before their matmul began barely
// gain: a third warp a scheduler does not raise the consumers' throughput there.
int consumers() {
  static const std::string v = nvrtc::tuningChoice("AGENT_R1_DECODE_TRUNK_CONSUMERS", {"8", "11"});
  return v.empty() ? 11 : std::stoi(v);
}
constexpr int kBoxCols = 256;         // kTrunk's BOX_COLS: the copy engine's widest box
constexpr size_t kTensorMapBytes = 128;  // cuda.h's CUtensorMap
constexpr int kMinStageBytes = 16384;
constexpr int kAttentionWarps = 4;  // kTrunk's ATT_WARPS
constexpr int kPhases = 4;          // kTrunk's PHASES
constexpr int kTraceEvents = 21;    // kTrunk's TRACE_EVENTS
constexpr int kMaxRows = 4;         // stageInput's
constexpr int kMinRingStages = 3;
// a kernel's parameters may take 32764 bytes (CUDA 12.1 on), 4 KiB before
constexpr size_t kMaxParamBytes = 32764;

struct Shape {
  int hidden, heads, kvHeads, headDim, inter, layers, rows, blockSize;
  int group() const { return heads / kvHeads; }
};

// Shared memory: the ring, then the larger of a matmul's staged input and the attention's rings and
// merge, then the query heads, then the ring's barriers (2 a stage).
struct Layout {
  int stageBytes = 0, ringStages = 0, xsBytes = 0, sharedBytes = 0;
};

int roundUp(int n, int to) { return (n + to - 1) / to * to; }

// What a stage size gives the weight stream: the bytes of whole rows the ring holds past the stage
// the consumers are reading (the copies that can be in flight, or landed ahead, while a matmul's
// input is being handed over and nothing else is read), capped at a block's share of the matmul,
// weighted by the matmul's bytes a layer.
double ringAhead(const Shape& s, int blocks, int stageBytes, int stages) {
  const int64_t hq = static_cast<int64_t>(s.heads) * s.headDim;
  const struct { int64_t n, k; } matmuls[] = {
      {hq + 2LL * s.kvHeads * s.headDim, s.hidden}, {s.hidden, hq}, {2LL * s.inter, s.hidden}, {s.hidden, s.inter}};
  double sum = 0;
  for (const auto& m : matmuls) {
    const int64_t rowBytes = 2 * m.k, perStage = stageBytes / rowBytes;
    const int64_t blockRows = (m.n + blocks - 1) / blocks;
    const int64_t ahead = std::min<int64_t>(perStage * (stages - 1), blockRows) * rowBytes;
    sum += static_cast<double>(m.n * rowBytes) * static_cast<double>(ahead);
  }
  return sum;
}

// The ring takes what shared memory is left, in stages of whole rows (one copy a stage) sized for
// the most rows ahead: a stage of the longest row leaves a fifth of itself empty under shorter rows
// (the 4B shape: 3 of the hidden size's 5,120-byte rows in 19,456 bytes, the down row's), and the
// memory idles through each hand-off once the ring's copies have landed, so its empty bytes are
// bytes not read then.
Layout layoutFor(const Shape& s, int device) {
  Layout out;
  const int longest = std::max({s.hidden, s.heads * s.headDim, s.inter}) * 2;
  const int attention =
      static_cast<int>(paged_attention::sharedBytes(s.headDim, s.group(), kAttentionWarps));
  out.xsBytes = roundUp(std::max(s.rows * longest, attention), 128);
  const int queries = s.group() * s.headDim * 2;
  // the kernel's static shared memory (partial sums of squares, flags) and the runtime's reserve
  const int fixed = out.xsBytes + queries + 1024;
  const int left = nvrtc::maxSharedBytes(device) - fixed;
  const auto stagesOf = [&](int stageBytes) { return std::max(0, left / (stageBytes + 16)); };
  const auto take = [&](int stageBytes) { out.stageBytes = stageBytes, out.ringStages = stagesOf(stageBytes); };
  // a stage holds the longest row, and at least 16 KiB (several short rows: one copy for them)
  const int smallest = roundUp(std::max(longest, kMinStageBytes), 128);
  take(smallest);
  if (nvrtc::tuningChoice("AGENT_R1_DECODE_TRUNK_STAGE_RULE", {"longest"}).empty()) {
    const int blocks = nvrtc::smCount(device);
    double best = ringAhead(s, blocks, out.stageBytes, out.ringStages);
    // candidates: whole multiples of each row length, from the smallest stage to a ring of the
    // fewest stages; the first of equal ones (more, smaller stages) kept
    for (const int rowBytes : {2 * s.hidden, 2 * s.heads * s.headDim, 2 * s.inter})
      for (int bytes = rowBytes; stagesOf(bytes) >= kMinRingStages; bytes += rowBytes) {
        const int stageBytes = roundUp(bytes, 128), stages = stagesOf(stageBytes);
        if (stageBytes < smallest || stages < kMinRingStages) continue;
        const double ahead = ringAhead(s, blocks, stageBytes, stages);
        if (ahead > best || (ahead == best && stageBytes < out.stageBytes)) best = ahead, take(stageBytes);
      }
  }
  out.sharedBytes = out.ringStages * out.stageBytes + out.xsBytes + queries + 16 * out.ringStages;
  return out;
}

// kTrunk's COLUMNS: o and down by columns (multiplyByColumns), each chunk of the input multiplied as
// soon as it is written. o's chunks are a KV head's query heads' columns, down's the widest multiple
// of kBoxCols that divides the intermediate size, each within one ring stage for a block's rows (both
// have the hidden size's rows); a chunk must be whole boxes of kBoxCols, so that a lane adds gemv_rows'
// products in its order. A matmul whose chunks cannot be so is multiplied by rows once its whole input
// is written, as is one that AGENT_R1_DECODE_TRUNK_O=rows or AGENT_R1_DECODE_TRUNK_DOWN=rows asks for
// (to compare).
struct Columns {
  int boxRows = 0, oCols = 0, downCols = 0;  // 0: that matmul by rows
  bool any() const { return oCols || downCols; }
};
Columns columnsFor(const Shape& s, int device, const Layout& layout) {
  static const bool oRows = nvrtc::tuningChoice("AGENT_R1_DECODE_TRUNK_O", {"rows", "heads"}) == "rows";
  static const bool downRows = nvrtc::tuningChoice("AGENT_R1_DECODE_TRUNK_DOWN", {"rows", "columns"}) == "rows";
  Columns c;
  const int sms = nvrtc::smCount(device);
  c.boxRows = (s.hidden + sms - 1) / sms;
  if (c.boxRows > 256) return Columns{};
  const int fit = layout.stageBytes / (2 * c.boxRows) / kBoxCols * kBoxCols;  // the widest chunk a stage holds
  const int head = s.group() * s.headDim;
  if (!oRows && head % kBoxCols == 0 && head <= fit) c.oCols = head;
  if (!downRows)
    for (int cols = fit; cols >= kBoxCols && !c.downCols; cols -= kBoxCols)
      if (s.inter % cols == 0) c.downCols = cols;
  return c;
}

// Why the trunk cannot run this shape on `device` with this shared-memory layout, or "" when it can.
std::string unsupported(const Shape& s, int device, const Layout& layout) {
  if (s.rows < 1 || s.rows > kMaxRows) return "it takes 1 to " + std::to_string(kMaxRows) + " rows";
  if (s.headDim != 64 && s.headDim != 128 && s.headDim != 256) return "head dim must be 64, 128 or 256";
  if (s.kvHeads <= 0 || s.heads % s.kvHeads || s.group() > 8) return "query heads must be 1 to 8 times the KV heads";
  if (s.hidden % 16 || s.inter % 16) return "hidden and intermediate sizes must be multiples of 16";
  int major = 0;
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 9) return "it copies weights with the copy engine of compute capability 9.0 and up";
  if (layout.ringStages < kMinRingStages)
    return "its ring of weight rows needs " + std::to_string(kMinRingStages) + " stages of " +
           std::to_string(layout.stageBytes) + " bytes beside " + std::to_string(layout.xsBytes) +
           " of staged input, more shared memory than the device has";
  const size_t params = sizeof(TrunkLayer) * s.layers + sizeof(TrunkIo) + 16 +
                        (columnsFor(s, device, layout).any() ? 2 * kTensorMapBytes * s.layers + 64 : 0);
  if (params > kMaxParamBytes) return "its " + std::to_string(s.layers) + " layers' weights overflow a launch's parameters";
  return "";
}

// Splits of a sequence's tokens: (sequence, KV head) items alone would leave most blocks idle through
// the attention, so each is cut into at most as many splits as leave one item a block, each of at
// least 64 of the longest sequence's tokens (paged attention's rule: below that a split's fixed
// costs outweigh its share).
int splitsFor(const Shape& s, int blocks, int width) {
  const int pairs = s.rows * s.kvHeads;
  const int byLength = (width * s.blockSize + 63) / 64;
  return std::max(1, std::min({blocks / pairs, byLength, 16}));
}

// AGENT_R1_DECODE_TRUNK_TRACE=1: the kernel records each block's clock at each step of each layer
// (kTrunk's TRUNK_TRACE) into a buffer that fusedDecodeTrunkTrace reads back, for bench/trunk-trace.ts
bool tracing() {
  static const bool on = nvrtc::tuningChoice("AGENT_R1_DECODE_TRUNK_TRACE", {"0", "1"}) == "1";
  return on;
}

// The trace buffer of `device` [blocks, layers, kTraceEvents] (int64), kept for fusedDecodeTrunkTrace:
// allocated (zeros) outside a CUDA graph capture, on the first traced launch of a shape; a graph
// captured with it writes it on each replay.
std::mutex traceMutex;
std::map<int, at::Tensor>& traces() {
  static auto* byDevice = new std::map<int, at::Tensor>();  // never destroyed: it would outlive libtorch's allocator
  return *byDevice;
}

at::Tensor& traceBuffer(int device, int blocks, int layers, cudaStream_t stream) {
  std::lock_guard<std::mutex> lock(traceMutex);
  at::Tensor& t = traces()[device];
  if (t.defined() && t.size(0) == blocks && t.size(1) == layers) return t;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  C10_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  TORCH_CHECK(status == cudaStreamCaptureStatusNone, kWho,
              ": the trace buffer cannot be allocated while a CUDA graph is captured; run a step eagerly first");
  t = at::zeros({blocks, layers, kTraceEvents},
                at::TensorOptions().dtype(at::kLong).device(at::kCUDA, static_cast<c10::DeviceIndex>(device)));
  return t;
}

void* trunkKernel(int device, const Shape& s, const Layout& layout, const Columns& columns, cudaStream_t stream) {
  static const std::string source = nvrtc::withBf16Helpers(decode_sources::kDecodeMath) + decode_sources::kHeadRope +
                                    decode_sources::kPagedAttention + kTrunk;
  std::vector<std::string> defines = paged_attention::defines(s.headDim, s.group(), s.blockSize);
  for (const auto& [name, value] :
       {std::make_pair("HIDDEN", s.hidden), std::make_pair("HQ", s.heads), std::make_pair("HKV", s.kvHeads),
        std::make_pair("INTER", s.inter), std::make_pair("LAYERS", s.layers), std::make_pair("ROWS", s.rows),
        std::make_pair("RING_STAGES", layout.ringStages), std::make_pair("STAGE_BYTES", layout.stageBytes),
        std::make_pair("XS_BYTES", layout.xsBytes), std::make_pair("CONSUMERS", consumers())})
    defines.push_back(std::string(name) + "=" + std::to_string(value));
  if (tracing()) defines.push_back("TRUNK_TRACE=1");
  if (columns.any()) {
    defines.push_back("COLUMNS=1");
    defines.push_back("BOX_ROWS=" + std::to_string(columns.boxRows));
    defines.push_back("BOX_COLS=" + std::to_string(kBoxCols));
    defines.push_back("O_CHUNK_COLS=" + std::to_string(columns.oCols));
    defines.push_back("DOWN_CHUNK_COLS=" + std::to_string(columns.downCols));
  }
  void* f = nvrtc::kernel(device, source.c_str(), "decode_trunk", defines, stream, kWho);
  nvrtc::allowMaxSharedBytes(f, device, kWho);
  return f;
}

void checkBf16(const at::Tensor& t, const at::Tensor& like, const char* what, std::initializer_list<int64_t> shape) {
  TORCH_CHECK(t.defined(), kWho, ": ", what, " is missing");
  TORCH_CHECK(t.device() == like.device() && t.scalar_type() == at::kBFloat16 && t.is_contiguous() &&
                  t.sizes() == at::IntArrayRef(shape),
              kWho, ": ", what, " must be a contiguous bf16 tensor ", at::IntArrayRef(shape), " on ", like.device(),
              ", got ", t.scalar_type(), " ", t.sizes(), " on ", t.device());
}

// The tensors of one layer in fusedDecodeTrunk's `layers`, in order
constexpr int kLayerTensors = 13;
const char* kLayerNames[kLayerTensors] = {"qkv weight", "qkv bias",    "input norm",      "q/k norm",   "o weight",
                                          "o bias",     "post norm",   "gate/up weight",  "gate/up bias", "down weight",
                                          "down bias",  "key cache",   "value cache"};

// fusedDecodeTrunk(x [B, H] bf16, layers [13 L] (per layer: qkv [(Hq + 2 Hkv) D, H], its bias | null,
//   inputNorm [H], qkNorm [Hq + Hkv, D] | null, o [H, Hq D], its bias | null, postNorm [H], gateUp
//   [2 I, H], its bias | null, down [H, I], its bias | null, kCache, vCache [slots, Hkv, D]),
//   positions [B], slots [B], blockTables [B, W] (int64), invFreq [D / 2] f32, blockSize, eps, scale)
//   -> [down [B, H], residual [B, H]]: the last layer's MLP output and the residual stream before it
Napi::Value FusedDecodeTrunk(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const at::Tensor x = unwrapTensor(env, info[0], "x");
  const Napi::Array handles = info[1].As<Napi::Array>();
  const at::Tensor positions = unwrapTensor(env, info[2], "positions");
  const at::Tensor slots = unwrapTensor(env, info[3], "slots");
  const at::Tensor tables = unwrapTensor(env, info[4], "blockTables");
  const at::Tensor invFreq = unwrapTensor(env, info[5], "invFreq");
  const int blockSize = info[6].As<Napi::Number>().Int32Value();
  const float eps = info[7].As<Napi::Number>().FloatValue();
  const float scale = info[8].As<Napi::Number>().FloatValue();
  TORCH_CHECK(handles.Length() > 0 && handles.Length() % kLayerTensors == 0, kWho, ": layers must hold ",
              kLayerTensors, " tensors (or nulls) a layer, got ", handles.Length());
  const int layers = static_cast<int>(handles.Length() / kLayerTensors);
  std::vector<at::Tensor> t(handles.Length());
  for (uint32_t i = 0; i < handles.Length(); i++) {
    const at::Tensor* p = unwrapOptionalTensor(env, handles.Get(i), kLayerNames[i % kLayerTensors]);
    if (p) t[i] = *p;
  }
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == at::kBFloat16 && x.is_contiguous() && x.dim() == 2, kWho,
              ": x must be a contiguous bf16 CUDA tensor [B, hidden]");
  for (int i : {0, 2, 4, 6, 7, 9, 11, 12})
    TORCH_CHECK(t[i].defined(), kWho, ": layer 0's ", kLayerNames[i], " is missing");
  TORCH_CHECK(t[11].dim() == 3 && t[4].dim() == 2 && t[9].dim() == 2, kWho,
              ": the caches must be [slots, Hkv, D], o and down weights 2-d");
  Shape s;
  s.rows = static_cast<int>(x.size(0));
  s.hidden = static_cast<int>(x.size(1));
  s.kvHeads = static_cast<int>(t[11].size(1));
  s.headDim = static_cast<int>(t[11].size(2));
  s.heads = static_cast<int>(t[4].size(1) / s.headDim);
  s.inter = static_cast<int>(t[9].size(1));
  s.layers = layers;
  s.blockSize = blockSize;
  const int device = x.get_device();
  const Layout layout = layoutFor(s, device);
  const std::string why = unsupported(s, device, layout);
  TORCH_CHECK(why.empty(), kWho, ": cannot run this step: ", why);
  const int64_t B = s.rows, H = s.hidden, D = s.headDim, I = s.inter, Hq = s.heads, Hkv = s.kvHeads;
  const int64_t qkvN = (Hq + 2 * Hkv) * D;
  std::vector<TrunkLayer> layerArgs(layers);
  for (int l = 0; l < layers; l++) {
    const at::Tensor* L = &t[static_cast<size_t>(l) * kLayerTensors];
    const int64_t slotsN = L[11].defined() && L[11].dim() == 3 ? L[11].size(0) : -1;
    checkBf16(L[0], x, "a layer's qkv weight", {qkvN, H});
    checkBf16(L[2], x, "a layer's input norm", {H});
    checkBf16(L[4], x, "a layer's o weight", {H, Hq * D});
    checkBf16(L[6], x, "a layer's post-attention norm", {H});
    checkBf16(L[7], x, "a layer's gate/up weight", {2 * I, H});
    checkBf16(L[9], x, "a layer's down weight", {H, I});
    checkBf16(L[11], x, "a layer's key cache", {slotsN, Hkv, D});
    checkBf16(L[12], x, "a layer's value cache", {slotsN, Hkv, D});
    TORCH_CHECK(slotsN % blockSize == 0, kWho, ": a cache's slots must be whole blocks of ", blockSize);
    if (L[1].defined()) checkBf16(L[1], x, "a layer's qkv bias", {qkvN});
    if (L[3].defined()) checkBf16(L[3], x, "a layer's q/k norm", {Hq + Hkv, D});
    if (L[5].defined()) checkBf16(L[5], x, "a layer's o bias", {H});
    if (L[8].defined()) checkBf16(L[8], x, "a layer's gate/up bias", {2 * I});
    if (L[10].defined()) checkBf16(L[10], x, "a layer's down bias", {H});
    // the copy engine and the staging read weights and norms 16 bytes at a time
    for (int i : {0, 2, 4, 6, 7, 9})
      TORCH_CHECK(reinterpret_cast<uintptr_t>(L[i].data_ptr()) % 16 == 0, kWho, ": layer ", l, "'s ",
                  kLayerNames[i], " does not start on 16 bytes (a view into a larger tensor?); pass a copy");
    const auto ptr = [](const at::Tensor& u) -> void* { return u.defined() ? u.data_ptr() : nullptr; };
    TrunkLayer& a = layerArgs[l];
    a.w[0] = ptr(L[0]);
    a.w[1] = ptr(L[4]);
    a.w[2] = ptr(L[7]);
    a.w[3] = ptr(L[9]);
    a.bias[0] = ptr(L[1]);
    a.bias[1] = ptr(L[5]);
    a.bias[2] = ptr(L[8]);
    a.bias[3] = ptr(L[10]);
    a.inputNorm = ptr(L[2]);
    a.postNorm = ptr(L[6]);
    a.qkNorm = ptr(L[3]);
    a.kc = ptr(L[11]);
    a.vc = ptr(L[12]);
  }
  const auto int64Rows = [&](const at::Tensor& u, const char* what) {
    TORCH_CHECK(u.device() == x.device() && u.scalar_type() == at::kLong && u.is_contiguous() && u.dim() >= 1 &&
                    u.size(0) == B,
                kWho, ": ", what, " must be contiguous int64 with ", B, " rows on ", x.device());
  };
  int64Rows(positions, "positions");
  int64Rows(slots, "slots");
  int64Rows(tables, "block tables");
  TORCH_CHECK(positions.dim() == 1 && slots.dim() == 1 && tables.dim() == 2, kWho,
              ": positions and slots are [B], block tables [B, W]");
  TORCH_CHECK(invFreq.device() == x.device() && invFreq.scalar_type() == at::kFloat && invFreq.is_contiguous() &&
                  invFreq.numel() == D / 2,
              kWho, ": invFreq must be float32 [D / 2] on ", x.device());
  int W = static_cast<int>(tables.size(1));
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream(device).stream();
  const Columns columns = columnsFor(s, device, layout);
  void* f = trunkKernel(device, s, layout, columns, stream);
  const int sms = nvrtc::smCount(device);
  const int threads = 32 * (consumers() + 1);
  TORCH_CHECK(nvrtc::residentBlocksPerSm(f, threads, layout.sharedBytes, kWho) >= 1, kWho,
              ": a block does not fit on an SM");
  int splits = splitsFor(s, sms, W);
  const auto bf16 = x.options();
  const auto f32 = x.options().dtype(at::kFloat);
  at::Tensor attn = at::empty({B, Hq * D}, bf16), res = at::empty({sms, B, H}, bf16);
  at::Tensor partSums = at::empty({B, Hq, splits, D}, f32), partStats = at::empty({B, Hq, splits, 2}, f32);
  at::Tensor down = at::empty({B, H}, bf16), resMlp = at::empty({B, H}, bf16);
  // zeroed each launch (a memset in the CUDA graph), so no launch depends on how the last one ended:
  // the counters (a multiple of 4, so the tagged words after them start on 16 bytes), then the
  // tagged words of q/k/v, the attention, o, silu(gate) * up and the MLP's output
  const int64_t countersN = (layers * kPhases + B * Hkv + 3) / 4 * 4;
  at::Tensor scratch = at::zeros({countersN + B * (qkvN + Hq * D + H + I + H)}, x.options().dtype(at::kInt));
  int* counters = scratch.data_ptr<int>();
  int* qkvWords = counters + countersN;
  int* attnWords = qkvWords + B * qkvN;
  int* oWords = attnWords + B * Hq * D;
  int* gateUpWords = oWords + B * H;
  int* mlpWords = gateUpWords + B * I;
  TrunkIo io{x.data_ptr(), positions.data_ptr(), slots.data_ptr(), tables.data_ptr(), invFreq.data_ptr(),
             qkvWords,     attn.data_ptr(),      attnWords,        oWords,           gateUpWords,        mlpWords,
             res.data_ptr(), partSums.data_ptr(), partStats.data_ptr(), down.data_ptr(), resMlp.data_ptr(),
             counters,     tracing() ? traceBuffer(device, sms, layers, stream).data_ptr() : nullptr};
  // kTrunk's ColumnMaps: each layer's o, then each layer's down weight, in boxes of boxRows x kBoxCols
  struct alignas(64) TensorMap {
    unsigned char bytes[kTensorMapBytes];
  };
  std::vector<TensorMap> columnMaps(columns.any() ? 2 * layers : 0);
  for (size_t l = 0; l < columnMaps.size() / 2; l++) {
    const unsigned boxRows = static_cast<unsigned>(columns.boxRows);
    nvrtc::encodeBf16Boxes(columnMaps[l].bytes, layerArgs[l].w[1], H, Hq * D, boxRows, kBoxCols, kWho);
    nvrtc::encodeBf16Boxes(columnMaps[layers + l].bytes, layerArgs[l].w[3], H, I, boxRows, kBoxCols, kWho);
  }
  void* args[] = {layerArgs.data(), &io, &W, &splits, const_cast<float*>(&eps), const_cast<float*>(&scale),
                  columnMaps.data()};
  nvrtc::launch(f, dim3(sms), dim3(threads), static_cast<unsigned>(layout.sharedBytes), stream, args,
                kWho);
  Napi::Array result = Napi::Array::New(env, 2);
  result.Set(0u, wrapTensor(env, down));
  result.Set(1u, wrapTensor(env, resMlp));
  return result;
}

// fusedDecodeTrunkUnsupported(device, hidden, heads, kvHeads, headDim, intermediate, layers, rows, blockSize)
//   -> why the trunk cannot run that step there, or null when it can
Napi::Value FusedDecodeTrunkUnsupported(const Napi::CallbackInfo& info) {
  const auto n = [&](int i) { return info[i].As<Napi::Number>().Int32Value(); };
  const Shape s{n(1), n(2), n(3), n(4), n(5), n(6), n(7), n(8)};
  const std::string why = unsupported(s, n(0), layoutFor(s, n(0)));
  return why.empty() ? info.Env().Null() : Napi::String::New(info.Env(), why);
}

// fusedDecodeTrunkTrace(device) -> a copy of the trace buffer [blocks, layers, events] (int64 ns), or
// null when no traced step ran (AGENT_R1_DECODE_TRUNK_TRACE=1 traces)
Napi::Value FusedDecodeTrunkTrace(const Napi::CallbackInfo& info) {
  const int device = info[0].As<Napi::Number>().Int32Value();
  at::Tensor copy;
  {
    std::lock_guard<std::mutex> lock(traceMutex);
    auto found = traces().find(device);
    if (found == traces().end()) return info.Env().Null();
    copy = found->second.clone();
  }
  return wrapTensor(info.Env(), copy);
}

#else

[[noreturn]] void noCuda(Napi::Env env) {
  throw Napi::Error::New(env,
                         "the decode trunk needs the native addon built against a CUDA libtorch (npm run build:native)");
}
Napi::Value FusedDecodeTrunk(const Napi::CallbackInfo& info) { noCuda(info.Env()); }
Napi::Value FusedDecodeTrunkUnsupported(const Napi::CallbackInfo& info) { noCuda(info.Env()); }
Napi::Value FusedDecodeTrunkTrace(const Napi::CallbackInfo& info) { noCuda(info.Env()); }

#endif

}  // namespace

void registerDecodeTrunk(Napi::Env env, Napi::Object exports) {
  exportFunction<FusedDecodeTrunk>(env, exports, "fusedDecodeTrunk");
  exportFunction<FusedDecodeTrunkUnsupported>(env, exports, "fusedDecodeTrunkUnsupported");
  exportFunction<FusedDecodeTrunkTrace>(env, exports, "fusedDecodeTrunkTrace");
}

}  // namespace agent_r1
