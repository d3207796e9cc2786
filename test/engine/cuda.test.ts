// The CUDA paths of the engine: the flash-attention decode step (over the blocks its block tables
// name, gathered or read in place, with per-sequence lengths) against the SDPA reference, a bf16 engine's logprobs against the
// model's own scoring, a float32 engine on the GPU against the same engine on the CPU, the fused
// decode kernels against the libtorch ops they replace, and CUDA graphs (which sample inside the
// graph, every batch) against eager decoding and sampling.
// Skipped where no GPU is visible (CI); run on the GPU machine.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';
import {
  applyRope,
  createCausalLM,
  packSequences,
  rmsNorm,
  ropeInvFreq,
  ropeTables,
  tinyConfig,
} from '../../src/models/index.js';
import {
  Engine,
  KVCache,
  decodeStep,
  generationModel,
  greedyTokens,
  prefill,
  sampleFromLogits,
  scaleLogits,
  tokenLogprobs,
} from '../../src/engine/index.js';
import { FusedWeights } from '../../src/engine/fused-weights.js';
import { GEMV_MAX_WEIGHT_BYTES } from '../../src/engine/fused-decode.js';
import { kernelTimeline } from '../../bench/kernel-timeline.js';

const skip = !torch.cuda.isAvailable() && 'CUDA is not available on this machine';
const PROMPTS = [
  Array.from({ length: 37 }, (_, i) => (i * 31 + 7) % 250),
  Array.from({ length: 5 }, (_, i) => (i * 17 + 3) % 250),
  Array.from({ length: 64 }, (_, i) => (i * 13 + 11) % 250),
  [42],
];

/** fn (awaited) with AGENT_R1_DECODE_TRUNK_ROWS set to `rows` (0: the layered kernels alone), then as it was. */
function withTrunkRows<T>(rows: number, fn: () => T): T {
  const before = process.env.AGENT_R1_DECODE_TRUNK_ROWS;
  const restore = () => {
    if (before === undefined) delete process.env.AGENT_R1_DECODE_TRUNK_ROWS;
    else process.env.AGENT_R1_DECODE_TRUNK_ROWS = before;
  };
  process.env.AGENT_R1_DECODE_TRUNK_ROWS = String(rows);
  let out: T;
  try {
    out = fn();
  } catch (e) {
    restore();
    throw e;
  }
  if (out instanceof Promise) return out.finally(restore) as T;
  restore();
  return out;
}

describe('engine on CUDA', { skip }, () => {
  it('flash decode over blocks out of order (16-token blocks gathered, 256-token blocks read in place) equals SDPA decode', () => {
    const prompts = [...PROMPTS, Array.from({ length: 300 }, (_, i) => (i * 7 + 5) % 250)];
    for (const family of ['qwen3', 'llama'] as const) {
      // head dim 64: the paged kernel's smallest (tiny models' default 16 is not one of its sizes)
      const model = createCausalLM(tinyConfig(family, { initializer_range: 0.1, head_dim: 64 }), {
        seed: 4,
        device: 'cuda:0',
        dtype: 'bfloat16',
      });
      const m = generationModel(model);
      for (const BS of [16, 256]) {
        torch.noGrad(() =>
          torch.scope(() => {
            // each prompt's blocks (room for its next token), taken from the pool in a scrambled order
            const need = prompts.map((p) => Math.ceil((p.length + 1) / BS));
            const numBlocks = need.reduce((a, b) => a + b, 0) + 3;
            const order = Array.from({ length: numBlocks }, (_, i) => (i * 5 + 3) % numBlocks);
            let next = 0;
            const tables = need.map((n) => {
              const table = order.slice(next, next + n);
              next += n;
              return table;
            });
            using cache = new KVCache(
              {
                numLayers: model.spec.numLayers,
                numBlocks,
                blockSize: BS,
                numKvHeads: model.spec.numKvHeads,
                headDim: model.spec.headDim,
              },
              { dtype: 'bfloat16', device: 'cuda:0' },
            );
            const slot = (i: number, p: number) => tables[i][Math.floor(p / BS)] * BS + (p % BS);
            using batch = packSequences(prompts, { device: 'cuda:0' });
            const slots = torch.tensor(
              prompts.flatMap((p, i) => p.map((_, j) => slot(i, j))),
              { device: 'cuda:0' },
            );
            const lastIndex = torch.tensor(
              batch.cuSeqlens.slice(1).map((x) => x - 1),
              { device: 'cuda:0' },
            );
            prefill(m, cache, { batch, slots, lastIndex });
            const positions = prompts.map((p) => p.length);
            const W = Math.max(...tables.map((t) => t.length));
            const inputs = {
              ids: torch.tensor([7, 8, 9, 10, 11], { device: 'cuda:0' }),
              positions: torch.tensor(positions, { device: 'cuda:0' }),
              slots: torch.tensor(
                positions.map((p, i) => slot(i, p)),
                { device: 'cuda:0' },
              ),
              blockTables: torch.tensor(
                tables.map((t) => Array.from({ length: W }, (_, j) => t[j] ?? 0)),
                { device: 'cuda:0' },
              ),
            };
            const sdpa = decodeStep(m, cache, { ...inputs, attention: 'sdpa' });
            for (const attention of ['flash', 'paged'] as const) {
              const out = decodeStep(m, cache, { ...inputs, attention });
              const rel = out.sub(sdpa).abs().max().item() / sdpa.abs().max().item();
              assert.ok(
                rel < 2e-2,
                `${family}, blocks of ${BS}: ${attention} vs sdpa decode logits, relative max diff ${rel}`,
              );
            }
          }),
        );
      }
      m.invFreq.dispose();
      model.dispose();
    }
  });

  it('the paged decode kernel reads scrambled blocks in place and equals float32 attention (splits: its choice, 1, 3 and 64; 4, 8 and 16 warps; groups 1 to 8, powers of two or not; head dims 64 to 256; blocks of 6, 16 and 32 tokens)', () => {
    // BS: tokens a cache block; 6 is no multiple of the 4 consecutive tokens a half-warp takes a step
    for (const [B, Hkv, G, D, BS] of [
      [5, 8, 2, 128, 16],
      [5, 4, 4, 64, 6],
      [10, 8, 4, 128, 16], // (KV head, row) blocks: 80 of 16 warps, 200 of 8, 320 of 4 (H200: 132 SMs)
      [25, 8, 1, 128, 16],
      [40, 8, 2, 128, 32],
      [3, 2, 8, 128, 16],
      [3, 8, 1, 256, 6],
      // groups of no power of two (Qwen2.5: 14 query heads over 2, 40 over 8, 12 over 2), padded to one
      [4, 2, 7, 64, 16],
      [6, 8, 5, 128, 16],
      [3, 2, 6, 128, 6],
      [2, 4, 4, 256, 16], // 256 threads a block at most (GROUP * head dim over 512)
    ]) {
      torch.noGrad(() =>
        torch.scope(() => {
          const device = 'cuda:0' as const;
          const lens = Array.from({ length: B }, (_, b) => [1, 5, 37, 300, 2000][b % 5] + b);
          const need = lens.map((l) => Math.ceil(l / BS));
          const numBlocks = need.reduce((a, b) => a + b, 0) + 3;
          const order = Array.from({ length: numBlocks }, (_, i) => (i * 7 + 3) % numBlocks);
          let next = 0;
          const tables = need.map((n) => {
            const t = order.slice(next, next + n);
            next += n;
            return t;
          });
          const W = Math.max(...need) + 2; // wider than any row needs: the kernel reads only its own blocks
          torch.manualSeed(B * 100 + G);
          const k = torch.randn([numBlocks * BS, Hkv, D], { device, dtype: 'bfloat16' });
          const v = torch.randn([numBlocks * BS, Hkv, D], { device, dtype: 'bfloat16' });
          const q = torch.randn([B, Hkv * G, D], { device, dtype: 'bfloat16' });
          const blockTables = torch.tensor(
            tables.map((t) => Array.from({ length: W }, (_, j) => t[j] ?? numBlocks - 1)),
            { device },
          );
          const positions = torch.tensor(
            lens.map((l) => l - 1),
            { device },
          );
          const scale = 1 / Math.sqrt(D);
          // splits: the kernel's choice (many at small batches), none, some, and the most (most of them
          // past the short rows' ends, with no tokens at all)
          const outs = [0, 1, 3, 64].map((splits) => {
            const out = torch.pagedDecodeAttention(q, k, v, blockTables, positions, { blockSize: BS, scale, splits });
            assert.deepEqual(out.shape, [B, Hkv * G, D]);
            return { splits, out };
          });
          for (let b = 0; b < B; b++) {
            const slots = torch.tensor(
              Array.from({ length: lens[b] }, (_, p) => tables[b][Math.floor(p / BS)] * BS + (p % BS)),
              { device },
            );
            const kb = k.indexSelect(0, slots).float().transpose(0, 1).unsqueeze(0); // [1, Hkv, L, D]
            const vb = v.indexSelect(0, slots).float().transpose(0, 1).unsqueeze(0);
            const qb = q.narrow(0, b, 1).float().unsqueeze(2); // [1, Hq, 1, D]
            const ref = torch
              .scaledDotProductAttention(qb, kb, vb, { scale, enableGqa: G > 1 })
              .squeeze(2)
              .squeeze(0);
            for (const { splits, out } of outs) {
              const diff = out.narrow(0, b, 1).squeeze(0).float().sub(ref).abs().max().item();
              assert.ok(
                diff < 2e-2,
                `B ${B}, Hkv ${Hkv}, G ${G}, D ${D}, block ${BS}, splits ${splits}, row ${b} (${lens[b]} tokens): max |diff| ${diff}`,
              );
            }
          }
        }),
      );
    }
  });

  it("a bf16 engine (flash prefill and decode) reports logprobs that the model's own scoring agrees with", async () => {
    const model = createCausalLM(tinyConfig('qwen3', { initializer_range: 0.1 }), {
      seed: 5,
      device: 'cuda:0',
      dtype: 'bfloat16',
    });
    using engine = new Engine(model, { maxBatchSize: 8, maxLength: 128, eosTokenIds: [] });
    const outs = await Promise.all(PROMPTS.map((p) => engine.generate(p, { maxTokens: 24, temperature: 1 })));
    outs.forEach((o, i) => {
      const want = torch.scope(() => {
        using b = packSequences([[...PROMPTS[i], ...o.tokenIds]], { device: 'cuda:0' });
        return model
          .logprobs(b)
          .logprobs.toArray()
          .slice(PROMPTS[i].length - 1, PROMPTS[i].length - 1 + o.tokenIds.length);
      });
      const d = Math.max(...want.map((w, j) => Math.abs(w - o.logprobs![j])));
      assert.ok(d < 5e-2, `prompt ${i}: bf16 engine vs scoring, max |diff| ${d}`);
    });
    engine.dispose();
    model.dispose();
  });

  it("a float32 engine on the GPU gives the CPU engine's greedy ids, batched and continuous, and leaks nothing", async () => {
    const config = tinyConfig('llama', { initializer_range: 0.1 });
    const cpu = createCausalLM(config, { seed: 6 });
    const gpu = createCausalLM(config, { seed: 6, device: 'cuda:0' });
    const before = torch.liveTensors();
    const a = new Engine(cpu, { maxBatchSize: 4, maxLength: 128 });
    const b = new Engine(gpu, { maxBatchSize: 4, maxLength: 128 });
    const sampling = { maxTokens: 20, temperature: 0 };
    const onCpu = await Promise.all(PROMPTS.map((p) => a.generate(p, sampling)));
    const first = b.generate(PROMPTS[0], sampling);
    while (b.stats.steps < 3) await new Promise((r) => setImmediate(r));
    const onGpu = [await first, ...(await Promise.all(PROMPTS.slice(1).map((p) => b.generate(p, sampling))))];
    assert.deepEqual(
      onGpu.map((o) => o.tokenIds),
      onCpu.map((o) => o.tokenIds),
    );
    onGpu.forEach((o, i) =>
      assert.ok(Math.max(...o.logprobs!.map((x, j) => Math.abs(x - onCpu[i].logprobs![j]))) < 1e-3),
    );
    a.dispose();
    b.dispose();
    assert.equal(torch.liveTensors(), before);
    cpu.dispose();
    gpu.dispose();
  });
});

describe('CUDA graphs', { skip }, () => {
  it('a captured function replays on new data in its static input, and a failed capture leaves no stream behind', () => {
    const x = torch.keep(torch.zeros([4], { device: 'cuda:0' }));
    const graph = new torch.CUDAGraph();
    const y = graph.capture(() => x.mul(2).add(1), { device: 'cuda:0' });
    x.copy_(torch.scope(() => torch.tensor([1, 2, 3, 4], { dtype: 'float32' })));
    graph.replay();
    assert.deepEqual(y.toArray(), [3, 5, 7, 9]);
    x.copy_(torch.scope(() => torch.tensor([-1, 0, 10, 0.5], { dtype: 'float32' })));
    graph.replay();
    assert.deepEqual(y.toArray(), [-1, 1, 21, 2]);
    graph.dispose();
    assert.ok(y.isDisposed, 'the static output goes with the graph');
    const bad = new torch.CUDAGraph();
    assert.throws(() => bad.capture(() => x.sum().item(), { device: 'cuda:0' }));
    bad.dispose();
    // eager work still runs on the default stream afterwards, and a new capture works
    assert.equal(
      torch.scope(() => x.add(1).sum().item()),
      13.5, // [-1, 0, 10, 0.5] + 1 = [0, 1, 11, 1.5]
    );
    const again = new torch.CUDAGraph();
    const z = again.capture(() => x.neg(), { device: 'cuda:0' });
    again.replay();
    assert.deepEqual(z.toArray(), [1, -0, -10, -0.5]); // -(0) is -0
    again.dispose();
    x.dispose();
  });

  for (const [headDim, attention] of [
    [16, 'flash'],
    [64, 'paged'],
  ] as const)
    it(`a bf16 engine gives the same greedy ids with CUDA graphs as with enforceEager, batch growing and shrinking (${attention} decode)`, async () => {
      const model = createCausalLM(tinyConfig('qwen3', { initializer_range: 0.1, head_dim: headDim }), {
        seed: 7,
        device: 'cuda:0',
        dtype: 'bfloat16',
      });
      const before = torch.liveTensors();
      const eager = new Engine(model, { maxBatchSize: 8, maxLength: 128, eosTokenIds: [], enforceEager: true });
      const graphed = new Engine(model, { maxBatchSize: 8, maxLength: 128, eosTokenIds: [] });
      assert.equal(graphed.decodeAttention, attention, 'auto decode attention');
      assert.equal(eager.usesCudaGraphs, false);
      assert.equal(graphed.usesCudaGraphs, true);
      // all four together (bucket 4), then lengths that end at different steps (4 -> 3 -> 2 -> 1 rows)
      for (const maxTokens of [
        [24, 24, 24, 24],
        [30, 9, 17, 4],
      ]) {
        const run = (e: Engine) =>
          Promise.all(PROMPTS.map((p, i) => e.generate(p, { maxTokens: maxTokens[i], temperature: 0 })));
        const a = await run(eager);
        const b = await run(graphed);
        assert.deepEqual(
          b.map((o) => o.tokenIds),
          a.map((o) => o.tokenIds),
        );
        b.forEach((o, i) => assert.ok(Math.max(...o.logprobs!.map((x, j) => Math.abs(x - a[i].logprobs![j]))) < 1e-2));
        graphed.releaseCache(); // the next round captures again over a new cache
      }
      // sampled in the graph: four rows all along (bucket 4, the eager step's shapes), greedy beside
      // temperature-only and top-p rows, seeded
      const mixed = [
        { temperature: 0 },
        { temperature: 1, seed: 1 },
        { temperature: 0.8, topP: 0.9, seed: 2 ** 40 + 3 },
        { temperature: 1, seed: 4 },
      ];
      const sampled = (e: Engine) => Promise.all(PROMPTS.map((p, i) => e.generate(p, { ...mixed[i], maxTokens: 24 })));
      const a = await sampled(eager);
      const b = await sampled(graphed);
      assert.deepEqual(
        b.map((o) => o.tokenIds),
        a.map((o) => o.tokenIds),
      );
      b.forEach((o, i) => assert.ok(Math.max(...o.logprobs!.map((x, j) => Math.abs(x - a[i].logprobs![j]))) < 1e-2));
      assert.equal(graphed.usesCudaGraphs, true, 'every capture worked');
      eager.dispose();
      graphed.dispose();
      assert.equal(torch.liveTensors(), before);
      model.dispose();
    });

  it("a released cache's graphs are kept when the next cache lands where it was, captured again when it does not; the same greedy ids each time", async () => {
    const model = createCausalLM(tinyConfig('qwen3', { initializer_range: 0.1, head_dim: 64 }), {
      seed: 8,
      device: 'cuda:0',
      dtype: 'bfloat16',
    });
    const before = torch.liveTensors();
    const eager = new Engine(model, { maxBatchSize: 8, maxLength: 128, eosTokenIds: [], enforceEager: true });
    const graphed = new Engine(model, { maxBatchSize: 8, maxLength: 128, eosTokenIds: [] });
    const run = (e: Engine) =>
      Promise.all(PROMPTS.map((p, i) => e.generate(p, { maxTokens: 12 + 5 * i, temperature: 0 })));
    const want = (await run(eager)).map((o) => o.tokenIds);
    assert.deepEqual(
      (await run(graphed)).map((o) => o.tokenIds),
      want,
    );
    const first = graphed.stats;
    assert.ok(first.graphCaptures > 0 && first.graphsReused === 0);
    // nothing allocated between: the caching allocator hands the same blocks back
    graphed.releaseCache();
    assert.deepEqual(
      (await run(graphed)).map((o) => o.tokenIds),
      want,
    );
    assert.equal(graphed.stats.graphsReused, 1);
    assert.equal(graphed.stats.graphCaptures, first.graphCaptures, 'no capture over a cache where the old one was');
    // the freed blocks taken by other tensors: the new cache lies elsewhere, the graphs are made again
    graphed.releaseCache();
    const layers = model.config.num_hidden_layers as number;
    const { numBlocks, blockSize } = graphed.cacheInfo;
    const blockers = Array.from({ length: 2 * layers }, () =>
      torch.keep(
        torch.empty([numBlocks * blockSize, model.spec.numKvHeads, 64], { dtype: 'bfloat16', device: 'cuda:0' }),
      ),
    );
    assert.deepEqual(
      (await run(graphed)).map((o) => o.tokenIds),
      want,
    );
    assert.equal(graphed.stats.graphsReused, 1);
    assert.equal(graphed.stats.graphCaptures, 2 * first.graphCaptures);
    for (const b of blockers) b.dispose();
    eager.dispose();
    graphed.dispose();
    assert.equal(torch.liveTensors(), before);
    model.dispose();
  });

  it("graphs sample every batch: a float32 engine gives eager sampling's tokens and logprobs for rows mixing greedy, temperature-only, top-k and top-p, with seeds, batches padded to their bucket", async () => {
    const model = createCausalLM(tinyConfig('qwen3', { initializer_range: 0.1 }), { seed: 8, device: 'cuda:0' });
    const before = torch.liveTensors();
    const eager = new Engine(model, { maxBatchSize: 8, maxLength: 128, eosTokenIds: [], enforceEager: true });
    const graphed = new Engine(model, { maxBatchSize: 8, maxLength: 128, eosTokenIds: [] });
    const prompts = [...PROMPTS, [7, 7, 7, 9]];
    // 5 rows (bucket 8, three padding rows) ending at different steps: the batch shrinks through smaller buckets
    const rounds = [
      [
        { temperature: 0, maxTokens: 24 },
        { temperature: 1, seed: 1, maxTokens: 20 },
        { temperature: 1, seed: 2 ** 40 + 3, maxTokens: 24 },
        { temperature: 0.8, topP: 0.9, seed: 5, maxTokens: 9 },
        { temperature: 1.2, topK: 20, seed: 6, maxTokens: 17 },
      ],
      // the RL batch: temperature only
      prompts.map((_, i) => ({ temperature: 1, seed: 10 + i, maxTokens: 16 + i })),
    ];
    for (const settings of rounds) {
      const run = (e: Engine) => Promise.all(prompts.map((p, i) => e.generate(p, settings[i])));
      const a = await run(eager);
      const b = await run(graphed);
      assert.deepEqual(
        b.map((o) => o.tokenIds),
        a.map((o) => o.tokenIds),
      );
      b.forEach((o, i) =>
        assert.ok(
          Math.max(...o.logprobs!.map((x, j) => Math.abs(x - a[i].logprobs![j]))) < 1e-5,
          `row ${i}: graph vs eager logprobs`,
        ),
      );
    }
    assert.equal(graphed.usesCudaGraphs, true, 'every capture worked');
    assert.ok(graphed.stats.graphCaptures >= 4, `${graphed.stats.graphCaptures} graphs captured`);
    assert.equal(eager.stats.graphCaptures, 0);
    eager.dispose();
    graphed.dispose();
    assert.equal(torch.liveTensors(), before);
    model.dispose();
  });
});

describe('async scheduling on CUDA', { skip }, () => {
  for (const enforceEager of [false, true])
    it(`a bf16 engine (paged decode, fused kernels${enforceEager ? ', eager' : ', CUDA graphs'}) queues steps ahead and gives the tokens of step-by-step scheduling: stop tokens, lengths, sampled rows, a request arriving mid-batch`, async () => {
      const model = createCausalLM(tinyConfig('qwen3', { initializer_range: 0.1, head_dim: 64 }), {
        seed: 7,
        device: 'cuda:0',
        dtype: 'bfloat16',
      });
      const before = torch.liveTensors();
      const o = { maxBatchSize: 8, maxLength: 128, enforceEager };
      const probe = new Engine(model, { ...o, eosTokenIds: [] });
      const plain = await Promise.all(PROMPTS.map((p) => probe.generate(p, { maxTokens: 30, temperature: 0 })));
      probe.dispose();
      // stop tokens that end two of the rows early, mid-batch
      const eos = [plain[0].tokenIds[6], plain[2].tokenIds[11]];
      const sync = new Engine(model, { ...o, eosTokenIds: eos });
      const ahead = new Engine(model, { ...o, eosTokenIds: eos, asyncScheduling: true });
      const settings = [
        { temperature: 0, maxTokens: 30 },
        { temperature: 1, seed: 3, maxTokens: 25 },
        { temperature: 0, maxTokens: 30 },
        { temperature: 0.8, seed: 2 ** 40 + 1, maxTokens: 13 },
      ];
      const run = async (e: Engine) => {
        const first = PROMPTS.map((p, i) => e.generate(p, settings[i]));
        // one more request once the others have decoded a few steps: the step in flight is read first
        while (e.stats.decodeSteps < 5) await new Promise((r) => setImmediate(r));
        const late = e.generate(PROMPTS[1], { temperature: 0, maxTokens: 20 });
        return Promise.all([...first, late]);
      };
      const a = await run(sync);
      const b = await run(ahead);
      assert.ok(
        a.some((x) => x.finishReason === 'stop'),
        'a row stopped early',
      );
      assert.deepEqual(
        b.map((x) => x.tokenIds),
        a.map((x) => x.tokenIds),
      );
      b.forEach((x, i) =>
        assert.ok(Math.max(0, ...x.logprobs!.map((v, j) => Math.abs(v - a[i].logprobs![j]))) < 1e-2, `row ${i}`),
      );
      assert.equal(ahead.usesCudaGraphs, !enforceEager);
      assert.equal(ahead.stats.generatedTokens, sync.stats.generatedTokens);
      sync.dispose();
      ahead.dispose();
      assert.equal(torch.liveTensors(), before);
      model.dispose();
    });
});

describe('fused decode kernels', { skip }, () => {
  const dev = 'cuda:0' as const;
  /** bf16 a against b: at least `exact` of the elements equal, none more than `maxSteps` bf16 rounding steps apart. */
  function assertBf16Close(a: torch.Tensor, b: torch.Tensor, what: string, exact = 0.99, maxSteps = 1.01) {
    torch.scope(() => {
      assert.deepEqual(a.shape, b.shape, `${what}: shape`);
      const x = a.to('float32');
      const y = b.to('float32');
      const equal = x.eq(y).to('float32').mean().item();
      // one step of bf16 (8 bits of mantissa) at the larger magnitude, plus a floor for values near 0
      const step = x
        .abs()
        .maximum(y.abs())
        .mul(2 ** -7)
        .add(1e-6);
      const worst = x.sub(y).abs().div(step).max().item();
      assert.ok(equal >= exact, `${what}: ${(100 * equal).toFixed(2)}% equal (want >= ${100 * exact}%)`);
      assert.ok(worst <= maxSteps, `${what}: worst difference ${worst.toFixed(2)} bf16 steps`);
    });
  }
  const bf16 = (shape: number[], scale = 1) => torch.randn(shape, { device: dev }).mul(scale).to('bfloat16');
  // float32's linear of bf16 operands, rounded to bf16 once: what a bf16 matmul that sums in float32 gives
  const roundedLinear = (x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | null) =>
    torch.linear(x.to('float32'), w.to('float32'), b?.to('float32')).to('bfloat16');

  it("addRmsNorm gives libtorch's add, rms_norm and weight multiply (with and without a residual)", () => {
    torch.manualSeed(3);
    torch.noGrad(() =>
      torch.scope(() => {
        for (const [T, H] of [
          [1, 1024],
          [7, 2560],
          [64, 64],
        ]) {
          const x = bf16([T, H], 3);
          const res = bf16([T, H], 2);
          const w = bf16([H]).add(1).to('bfloat16');
          const fused = torch.addRmsNorm(x, res, w, 1e-6);
          const sum = x.add(res);
          assertBf16Close(fused.residual, sum, `residual ${T}x${H}`, 1);
          assertBf16Close(fused.out, rmsNorm(sum, w, 1e-6), `norm of the sum ${T}x${H}`);
          const first = torch.addRmsNorm(x, null, w, 1e-6);
          assert.equal(first.residual, x, 'without a residual, the residual stream is x itself');
          assertBf16Close(first.out, rmsNorm(x, w, 1e-6), `norm ${T}x${H}`);
        }
      }),
    );
  });

  it("siluMul gives libtorch's silu(gate) * up", () => {
    torch.manualSeed(4);
    torch.noGrad(() =>
      torch.scope(() => {
        for (const [T, I] of [
          [1, 3072],
          [33, 9728],
        ]) {
          const gu = bf16([T, 2 * I], 4);
          const ref = gu
            .narrow(1, 0, I)
            .silu()
            .mul(gu.narrow(1, I, I));
          assertBf16Close(torch.siluMul(gu), ref, `siluMul ${T}x${I}`);
        }
      }),
    );
  });

  it("copyPinned gives copy_'s bits both ways between pinned host memory and the device (one word, one block, the grid's stride loop), and names what it refuses", () => {
    torch.manualSeed(6);
    torch.noGrad(() =>
      torch.scope(() => {
        for (const [n, dtype] of [
          [1, 'float32'],
          [2, 'bfloat16'],
          [300, 'int64'],
          [300_001, 'float64'],
        ] as const) {
          const host = torch.randn([n]).mul(1e3).to(dtype);
          const pinned = torch.empty([n], { dtype, pinMemory: true }).copy_(host);
          const onDevice = torch.zeros([n], { dtype, device: dev });
          torch.copyPinned(onDevice, pinned);
          assert.ok(onDevice.to('cpu').eq(host).all().item(), `${n} ${dtype} to the device: every value copied`);
          const back = torch.empty([n], { dtype, pinMemory: true }).copy_(torch.zeros([n], { dtype }));
          torch.copyPinned(back, onDevice.mul(2));
          torch.cuda.synchronize();
          assert.ok(back.eq(host.mul(2)).all().item(), `${n} ${dtype} back to the host: every value copied`);
        }
        const pinned = torch.empty([8], { dtype: 'float64', pinMemory: true });
        const dst = torch.zeros([8], { dtype: 'float64', device: dev });
        assert.throws(() => torch.copyPinned(dst, torch.zeros([8], { dtype: 'float64' })), /pinned host tensor/);
        assert.throws(
          () => torch.copyPinned(dst, torch.empty([8], { dtype: 'float32', pinMemory: true })),
          /one dtype and size/,
        );
        assert.throws(() => torch.copyPinned(dst.narrow(0, 0, 4), pinned), /one dtype and size/);
        assert.throws(
          () =>
            torch.copyPinned(
              torch.zeros([1], { dtype: 'bfloat16', device: dev }),
              torch.empty([1], { dtype: 'bfloat16', pinMemory: true }),
            ),
          /4-byte words/,
        );
      }),
    );
  });

  it('qkNormRopeCache gives the q/k norms, RoPE and cache writes of libtorch (head dims 64, 128, 256; with and without q/k norms)', () => {
    torch.manualSeed(5);
    torch.noGrad(() =>
      torch.scope(() => {
        for (const [T, Hq, Hkv, D, withNorm] of [
          [5, 16, 8, 128, true],
          [3, 8, 2, 64, false],
          [4, 4, 4, 256, true],
        ] as const) {
          const qkv = bf16([T, (Hq + 2 * Hkv) * D], 2);
          const norm = withNorm
            ? bf16([Hq + Hkv, D])
                .mul(0.3)
                .add(1)
                .to('bfloat16')
            : null;
          // positions far apart (RoPE at large angles too), slots scrambled in a cache of 3 T slots
          const positions = torch.tensor(
            Array.from({ length: T }, (_, i) => i * 997 + 3),
            { device: dev },
          );
          const slots = torch.tensor(
            Array.from({ length: T }, (_, i) => (i * 7 + 2) % (3 * T)),
            { device: dev },
          );
          const invFreq = ropeInvFreq({ type: 'default', theta: 1000000 }, D).to({ device: dev });
          const kCache = torch.zeros([3 * T, Hkv, D], { dtype: 'bfloat16', device: dev });
          const vCache = torch.zeros([3 * T, Hkv, D], { dtype: 'bfloat16', device: dev });
          const q = torch.qkNormRopeCache(qkv, {
            norm,
            positions,
            invFreq,
            slots,
            kCache,
            vCache,
            numHeads: Hq,
            numKvHeads: Hkv,
            headDim: D,
            eps: 1e-6,
          });
          // the models' path: narrow, per-head norm, rotate-half RoPE from bf16 tables
          let qk = qkv.narrow(1, 0, (Hq + Hkv) * D).view(T, Hq + Hkv, D);
          if (norm) qk = rmsNorm(qk, norm, 1e-6);
          const { cos, sin } = ropeTables(invFreq, positions, 'bfloat16');
          qk = applyRope(qk, cos, sin);
          const what = `T ${T}, ${Hq}/${Hkv} heads of ${D}${withNorm ? ', q/k norms' : ''}`;
          assertBf16Close(q, qk.narrow(1, 0, Hq), `q: ${what}`);
          assertBf16Close(kCache.indexSelect(0, slots), qk.narrow(1, Hq, Hkv), `k: ${what}`);
          const v = qkv.narrow(1, (Hq + Hkv) * D, Hkv * D).view(T, Hkv, D);
          assert.equal(
            vCache.indexSelect(0, slots).to('float32').sub(v.to('float32')).abs().max().item(),
            0,
            `v: ${what}`,
          );
          // the slots not written stay zero
          const written = new Set(slots.toArray() as number[]);
          for (let s = 0; s < 3 * T; s++)
            if (!written.has(s)) assert.equal(kCache.select(0, s).abs().max().item(), 0, `slot ${s} untouched`);
        }
      }),
    );
  });

  it("gemvRows gives float32's linear rounded once for 1 to 4 rows (with and without a bias)", () => {
    torch.manualSeed(9);
    torch.noGrad(() =>
      torch.scope(() => {
        // Against float32's linear, not libtorch's bf16 one: cuBLAS picks a kernel per device, and on an
        // H100 its bf16 linear of 4x9728 . 2560x9728 + bias came 2.75 bf16 steps from gemvRows (a
        // split-K reduction rounded in bf16), within 1.5 on an H200 (bench/results/h100-decode-step-kernels.log).
        for (const [M, N, K] of [
          [1, 4096, 1024],
          [2, 1024, 3072],
          [3, 1000, 2560],
          [4, 2560, 9728],
          // more rows than the device holds warps at once: each warp takes several
          [2, 40000, 1000],
        ]) {
          const x = bf16([M, K]);
          const w = bf16([N, K], 0.05);
          const b = bf16([N], 0.1);
          const what = `${M}x${K} . ${N}x${K}`;
          assertBf16Close(torch.gemvRows(x, w, null), roundedLinear(x, w, null), what, 0.97);
          assertBf16Close(torch.gemvRows(x, w, b), roundedLinear(x, w, b), `${what} + bias`, 0.97);
        }
      }),
    );
  });

  it("gemvRows gives float32's linear rounded once, and the same bits per CUDA-graph replay over new inputs", () => {
    torch.manualSeed(11);
    torch.noGrad(() =>
      torch.scope(() => {
        for (const [M, N, K] of [
          // far fewer rows than the grid has warps, of one batch of loads and of 5
          [1, 8, 64],
          [2, 3, 9728],
          // K not a multiple of 256: a lane's last load of a row past its end for some lanes
          [3, 50, 1000],
          // the 4B shape's q/k/v and o at one row: ~2 rows a warp of 10 loads a lane, and 1 of 16
          [1, 6144, 2560],
          [1, 2560, 4096],
          // ~13 rows a warp of 4 loads a lane (the 0.6B shape's K)
          [4, 40000, 1024],
        ]) {
          const what = `${M}x${K} . ${N}x${K}`;
          const x = bf16([M, K]);
          const w = bf16([N, K], 0.05);
          const b = bf16([N], 0.1);
          const first = torch.gemvRows(x, w, b);
          // against float32's linear rounded once (a bf16 linear of so few rows may reduce split sums in
          // bf16, a step off in a third of a 2x3 output)
          assertBf16Close(first, roundedLinear(x, w, b), what, 0.97, 1.01);
          const bits = (t: torch.Tensor) => t.view(-1).to('float32').toArray() as number[];
          const graph = new torch.CUDAGraph();
          try {
            const out = graph.capture(() => [torch.gemvRows(x, w, b), torch.gemvRows(x, w, b)] as const, {
              device: dev,
            });
            for (let replay = 0; replay < 2; replay++) {
              x.copy_(bf16([M, K]));
              const eager = bits(torch.gemvRows(x, w, b));
              graph.replay();
              for (const [i, o] of out.entries())
                assert.deepEqual(bits(o), eager, `${what}: replay ${replay}, launch ${i + 1} of the graph`);
            }
          } finally {
            graph.dispose();
          }
        }
      }),
    );
  });

  it('gemvRows with silu * up or the add and norm folded in gives the kernels it replaces, with and without dependent launches', () => {
    torch.manualSeed(10);
    torch.noGrad(() =>
      torch.scope(() => {
        for (const pdl of [true, false]) {
          torch.setDependentLaunches(pdl);
          assert.equal(torch.dependentLaunches(), pdl);
          for (const [M, N, K] of [
            [1, 1024, 3072],
            [4, 2560, 9728],
            [3, 6144, 2560],
          ]) {
            const what = `${M}x${K} . ${N}x${K}, dependent launches ${pdl}`;
            const w = bf16([N, K], 0.05);
            const b = bf16([N], 0.1);
            // silu * up: the same staged values and sums as siluMul then gemvRows, so the same bits
            const gu = bf16([M, 2 * K], 4);
            assertBf16Close(
              torch.gemvRows(gu, w, b, { siluMul: true }),
              torch.gemvRows(torch.siluMul(gu), w, b),
              `silu ${what}`,
              1,
              0,
            );
            // add and norm: the same add; the norm's sum of squares is summed in another order
            const x = bf16([M, K], 3);
            const res = bf16([M, K], 2);
            const nw = bf16([K]).add(1).to('bfloat16');
            const fused = torch.addRmsNormGemvRows(x, res, nw, 1e-6, w, b);
            const apart = torch.addRmsNorm(x, res, nw, 1e-6);
            assertBf16Close(fused.residual, apart.residual, `residual ${what}`, 1, 0);
            assertBf16Close(fused.out, torch.gemvRows(apart.out, w, b), `norm ${what}`, 0.97, 1.5);
            const first = torch.addRmsNormGemvRows(x, null, nw, 1e-6, w, null);
            assert.equal(first.residual, x, 'without a residual, the residual stream is x itself');
            assertBf16Close(
              first.out,
              torch.gemvRows(torch.addRmsNorm(x, null, nw, 1e-6).out, w, null),
              `first norm ${what}`,
              0.97,
              1.5,
            );
          }
        }
        torch.setDependentLaunches(true);
        assert.throws(
          () => torch.gemvRows(bf16([1, 64]), bf16([8, 64]), null, { siluMul: true }),
          /2 K\] \(gate \| up\)/,
        );
      }),
    );
  });

  it('sampleRows draws the tokens and logprobs of the libtorch sampling ops (greedy, sampled and mixed rows; u near 1; masked tokens)', () => {
    torch.manualSeed(8);
    torch.noGrad(() =>
      torch.scope(() => {
        for (const V of [151936, 300]) {
          const B = 9;
          const logits = torch.randn([B, V], { device: dev }).mul(3);
          // row 4: all but 10 tokens masked out; row 5: u right below 1 (the last tokens of nonzero probability)
          logits
            .select(0, 4)
            .narrow(0, 10, V - 10)
            .fill_(-Infinity);
          const temps = [1, 0.7, 1.3, 1, 1, 0.5, 2, 1, 1];
          const temperature = torch.tensor(temps, { device: dev });
          const u = torch.tensor([0.1, 0.5, 0.9, 0.0, 0.77, 0.99999994, 0.3, 0.6, 0.42], { device: dev });
          const greedyRows = [false, false, true, false, false, false, true, false, false];
          const greedy = torch.tensor(greedyRows, { device: dev });
          const scaled = scaleLogits(logits, temperature.unsqueeze(1));
          const lse = scaled.logsumexp(-1, true);
          const sampledRef = sampleFromLogits(scaled, u, lse);
          const argmax = greedyTokens(scaled);
          for (const [mode, ours, want] of [
            ['sampled', torch.sampleRows(logits, temperature, u, null), sampledRef],
            ['mixed', torch.sampleRows(logits, temperature, u, greedy), torch.where(greedy, argmax, sampledRef)],
            ['greedy', torch.sampleRows(logits, temperature, null, null), argmax],
          ] as const) {
            // the same draw, but where the target sits within rounding of a boundary (row 5's u just below 1):
            // there the draws may differ by tokens whose probability is below float32's resolution of the total
            const got = ours.tokens.toArray() as number[];
            const ref = want.toArray() as number[];
            const probs = scaled.sub(lse).exp();
            got.forEach((g, b) => {
              if (g === ref[b]) return;
              const [a, z] = [Math.min(g, ref[b]), Math.max(g, ref[b])];
              const between = probs
                .select(0, b)
                .narrow(0, a + 1, z - a)
                .sum()
                .item();
              assert.ok(
                b === 5 && between < 1e-6,
                `V ${V}, ${mode}, row ${b}: token ${g}, want ${ref[b]} (mass between ${between})`,
              );
            });
            const lp = tokenLogprobs(scaled, ours.tokens, lse);
            const d = ours.logprobs.sub(lp).abs().max().item();
            assert.ok(d < 1e-4, `V ${V}, ${mode}: logprobs differ by ${d}`);
          }
          assert.ok((sampledRef.toArray() as number[])[4] < 10, 'a masked token is never drawn');
        }
      }),
    );
  });

  /**
   * Two caches (for two paths to write alike) of `numBlocks` blocks of `BS` tokens, each holding
   * `prompts` prefilled into the blocks `tables` names; `slot(i, p)`: the cache slot of prompt i's
   * position p.
   */
  function prefilledTwins(
    m: ReturnType<typeof generationModel>,
    prompts: number[][],
    tables: number[][],
    numBlocks: number,
    BS: number,
  ): { caches: KVCache[]; slot: (i: number, p: number) => number } {
    const shape = {
      numLayers: m.spec.numLayers,
      numBlocks,
      blockSize: BS,
      numKvHeads: m.spec.numKvHeads,
      headDim: m.spec.headDim,
    };
    const caches = [0, 1].map(() => new KVCache(shape, { dtype: 'bfloat16', device: dev }));
    const slot = (i: number, p: number) => tables[i][Math.floor(p / BS)] * BS + (p % BS);
    using batch = packSequences(prompts, { device: dev });
    const slots = torch.tensor(
      prompts.flatMap((p, i) => p.map((_, j) => slot(i, j))),
      { device: dev },
    );
    const lastIndex = torch.tensor(
      batch.cuSeqlens.slice(1).map((x) => x - 1),
      { device: dev },
    );
    for (const c of caches) prefill(m, c, { batch, slots, lastIndex });
    return { caches, slot };
  }

  for (const family of ['qwen3', 'llama'] as const)
    it(`${family}: a decode step through the fused kernels gives the models' trunk's logits, keys and values`, () => {
      const model = createCausalLM(tinyConfig(family, { initializer_range: 0.1, head_dim: 64 }), {
        seed: 6,
        device: dev,
        dtype: 'bfloat16',
      });
      const base = generationModel(model);
      const fused = new FusedWeights(model.spec, base.layers);
      const m = { ...base, layers: fused.layers };
      const BS = 16;
      torch.noGrad(() =>
        torch.scope(() => {
          const prompts = PROMPTS;
          const tables = prompts.map((p, i) =>
            Array.from({ length: Math.ceil((p.length + 1) / BS) }, (_, j) => 1 + i * 8 + j),
          );
          const { caches, slot } = prefilledTwins(m, prompts, tables, 40, BS);
          const positions = prompts.map((p) => p.length);
          const W = Math.max(...tables.map((t) => t.length));
          const inputs = {
            ids: torch.tensor([7, 8, 9, 10], { device: dev }),
            positions: torch.tensor(positions, { device: dev }),
            slots: torch.tensor(
              positions.map((p, i) => slot(i, p)),
              { device: dev },
            ),
            blockTables: torch.tensor(
              tables.map((t) => Array.from({ length: W }, (_, j) => t[j] ?? 0)),
              { device: dev },
            ),
            attention: 'paged' as const,
          };
          const trunk = decodeStep(m, caches[0], inputs);
          const viaKernels = decodeStep(m, caches[1], { ...inputs, fusedKernels: true });
          const rel = viaKernels.sub(trunk).abs().max().item() / trunk.abs().max().item();
          assert.ok(rel < 2e-2, `${family}: fused vs trunk decode logits, relative max diff ${rel}`);
          assert.deepEqual(viaKernels.argmax(-1).toArray(), trunk.argmax(-1).toArray(), 'greedy tokens');
          // the decoded token's key and value in every layer (deeper layers' inputs carry the logits' small differences)
          for (let layer = 0; layer < model.spec.numLayers; layer++) {
            for (const kv of ['k', 'v'] as const) {
              const ours = caches[1][kv][layer].indexSelect(0, inputs.slots).to('float32');
              const ref = caches[0][kv][layer].indexSelect(0, inputs.slots).to('float32');
              const d = ours.sub(ref).abs().max().item() / ref.abs().max().item();
              assert.ok(d < 2e-2, `${family} layer ${layer}: decoded ${kv} relative max diff ${d}`);
            }
          }
          for (const c of caches) c.dispose();
        }),
      );
      fused.dispose();
      base.invFreq.dispose();
      model.dispose();
    });
  it("the decode trunk (every layer in one kernel) gives the layered kernels' logits, keys and values bit for bit at 1 to 4 rows (qwen3 at head dim 128, group 4, o a KV head at a time, over a weight ring that wraps many times; qwen2 with biases, group 2, o by rows: its heads' 128 columns are not whole boxes of 256; down by columns in both), and close ones where its splits differ", () => {
    const configs = [
      tinyConfig('qwen3', {
        initializer_range: 0.05,
        hidden_size: 1024,
        intermediate_size: 3072,
        num_attention_heads: 32,
        num_key_value_heads: 8,
        head_dim: 128,
        num_hidden_layers: 8,
      }),
      tinyConfig('qwen2', {
        initializer_range: 0.1,
        hidden_size: 256,
        intermediate_size: 512,
        num_attention_heads: 4,
        num_key_value_heads: 2,
        num_hidden_layers: 3,
      }),
    ];
    for (const config of configs) {
      const family = config.model_type;
      const model = createCausalLM(config, { seed: 8, device: dev, dtype: 'bfloat16' });
      const base = generationModel(model);
      const fused = new FusedWeights(model.spec, base.layers);
      const m = { ...base, layers: fused.layers };
      const BS = 16;
      // the last prompt is long enough that the trunk cuts it into other splits than the layered attention
      const prompts = [...PROMPTS, Array.from({ length: 1500 }, (_, i) => (i * 11 + 3) % 250)];
      torch.noGrad(() =>
        torch.scope(() => {
          // each prompt's blocks (room for its next token): every third block of the pool, in order
          const need = prompts.map((p) => Math.ceil((p.length + 1) / BS));
          const starts = need.map((_, i) => need.slice(0, i).reduce((a, b) => a + b, 0));
          const tables = need.map((n, i) => Array.from({ length: n }, (_, j) => 1 + 3 * (starts[i] + j)));
          const numBlocks = 2 + 3 * need.reduce((a, b) => a + b, 0);
          const { caches, slot } = prefilledTwins(m, prompts, tables, numBlocks, BS);
          const stepOf = (rows: number[]) => {
            const positions = rows.map((i) => prompts[i].length);
            const W = Math.max(...rows.map((i) => tables[i].length));
            return {
              ids: torch.tensor(
                rows.map((i) => 7 + i),
                { device: dev },
              ),
              positions: torch.tensor(positions, { device: dev }),
              slots: torch.tensor(
                rows.map((i, r) => slot(i, positions[r])),
                { device: dev },
              ),
              blockTables: torch.tensor(
                rows.map((i) => Array.from({ length: W }, (_, j) => tables[i][j] ?? 0)),
                { device: dev },
              ),
              attention: 'paged' as const,
              fusedKernels: true,
            };
          };
          const decodeBoth = (rows: number[]) => {
            const inputs = stepOf(rows);
            const trunk = withTrunkRows(4, () => decodeStep(m, caches[0], inputs));
            const layered = withTrunkRows(0, () => decodeStep(m, caches[1], inputs));
            return { inputs, trunk, layered };
          };
          // the layered step multiplies through gemvRows (the trunk's arithmetic) at one row, and at
          // 2 to 4 rows only weights of at most GEMV_MAX_WEIGHT_BYTES.fewRows (libtorch's linear above)
          const p0 = m.layers[0];
          const smallWeights = [p0.fused!.qkv, p0.o, p0.fused!.gateUp, p0.down].every(
            (w) => w.numel * 2 <= GEMV_MAX_WEIGHT_BYTES.fewRows,
          );
          for (const rows of [[0], [3], [2], [0, 1], [2, 0, 3], [0, 1, 2, 3]]) {
            const { inputs, trunk, layered } = decodeBoth(rows);
            const what = `${family}, rows ${rows.join(',')}`;
            if (rows.length > 1 && !smallWeights) {
              const rel = trunk.sub(layered).abs().max().item() / layered.abs().max().item();
              assert.ok(rel < 2e-2, `${what}: logits against libtorch's linear, relative max diff ${rel}`);
              assert.deepEqual(trunk.argmax(-1).toArray(), layered.argmax(-1).toArray(), `${what}: greedy tokens`);
              continue;
            }
            assert.equal(
              trunk.eq(layered).all().item(),
              1,
              `${what}: logits, max diff ${trunk.sub(layered).abs().max().item()}`,
            );
            for (let layer = 0; layer < model.spec.numLayers; layer++) {
              for (const kv of ['k', 'v'] as const) {
                const ours = caches[0][kv][layer].indexSelect(0, inputs.slots);
                const ref = caches[1][kv][layer].indexSelect(0, inputs.slots);
                assert.equal(ours.eq(ref).all().item(), 1, `${what}: layer ${layer}'s new ${kv}`);
              }
            }
          }
          // 1501 tokens: the trunk takes at most 16 splits, the layered attention more at qwen3's 8 KV heads
          const { trunk, layered } = decodeBoth([4]);
          const rel = trunk.sub(layered).abs().max().item() / layered.abs().max().item();
          assert.ok(rel < 1e-2, `${family}: long row's logits, relative max diff ${rel}`);
          assert.deepEqual(
            trunk.argmax(-1).toArray(),
            layered.argmax(-1).toArray(),
            `${family}: long row's greedy token`,
          );
          for (const c of caches) c.dispose();
        }),
      );
      fused.dispose();
      base.invFreq.dispose();
      model.dispose();
    }
  });

  it('the decode trunk says why it cannot run a step (5 rows, head dim 32, the CPU) and refuses to be given one', () => {
    const shape = {
      hidden: 1024,
      numHeads: 16,
      numKvHeads: 8,
      headDim: 128,
      intermediate: 3072,
      layers: 4,
      rows: 1,
      blockSize: 16,
    };
    assert.equal(torch.decodeTrunkUnsupported(dev, shape), null);
    assert.match(torch.decodeTrunkUnsupported(dev, { ...shape, rows: 5 }) ?? '', /1 to 4 rows/);
    assert.match(torch.decodeTrunkUnsupported(dev, { ...shape, headDim: 32 }) ?? '', /head dim/);
    assert.match(torch.decodeTrunkUnsupported('cpu', shape) ?? '', /runs on CUDA/);
    // a ring row longer than shared memory holds
    assert.match(torch.decodeTrunkUnsupported(dev, { ...shape, intermediate: 200000 }) ?? '', /shared memory/);
    torch.noGrad(() =>
      torch.scope(() => {
        const x = torch.zeros([5, 64], { device: dev, dtype: 'bfloat16' });
        const idx = torch.zeros([5], { device: dev });
        assert.throws(
          () =>
            torch.decodeTrunk(x, [], {
              positions: idx,
              slots: idx,
              blockTables: idx.view(5, 1),
              invFreq: torch.zeros([16], { device: dev }),
              blockSize: 16,
              eps: 1e-6,
              scale: 1,
            }),
          /layers must hold 13 tensors/,
        );
      }),
    );
  });
});

describe('profiler on CUDA', { skip }, () => {
  it('sees every kernel of a replayed decode graph, each its own event, and the kernel timeline splits the decode steps', async () => {
    // layers enough that the timeline finds the layer's kernels repeat (2 would leave it too few periods)
    const model = createCausalLM(tinyConfig('qwen3', { initializer_range: 0.1, head_dim: 64, num_hidden_layers: 6 }), {
      seed: 3,
      device: 'cuda:0',
      dtype: 'bfloat16',
    });
    // 11 decode steps after the prefill's token, profiled: the kernels of each, by name
    const profiled = async () => {
      const engine = new Engine(model, { maxBatchSize: 2, maxLength: 64, eosTokenIds: [] });
      assert.equal(engine.usesCudaGraphs, true);
      assert.equal(engine.fusedKernels, true);
      await engine.generate(PROMPTS[1], { maxTokens: 4, temperature: 0 }); // capture outside the profile
      const { events } = await torch.profile(
        async () => {
          await engine.generate(PROMPTS[1], { maxTokens: 12, temperature: 0 });
          torch.cuda.synchronize();
        },
        { cuda: true },
      );
      engine.dispose();
      const kernels = events.filter((e) => e.device === 'cuda');
      return { events, count: (name: string) => kernels.filter((e) => e.name === name).length };
    };
    // batch 1 through the decode trunk (every layer in one kernel a step)
    const trunk = await withTrunkRows(1, profiled);
    assert.ok(trunk.count('decode_trunk') >= 11, `decode_trunk ${trunk.count('decode_trunk')} times`);
    assert.equal(trunk.count('gemv_rows'), 0);
    // the layered kernels: each step sampling once and running 6 layers' gemvRows
    const { events, count } = await withTrunkRows(0, profiled);
    // the decode step samples the lm_head's bf16 logits as they are
    assert.ok(count('sample_rows_bf16') >= 11, `sample_rows_bf16 ${count('sample_rows_bf16')} times`);
    assert.ok(count('gemv_rows') >= 11 * 6, `gemv_rows ${count('gemv_rows')} times`);
    assert.equal(count('decode_trunk'), 0);
    const t = kernelTimeline(events);
    assert.ok(t.steps.length >= 2);
    for (const s of t.steps) assert.ok(s.spanUs > 0 && s.busyUs > 0 && s.kernels > 5, JSON.stringify(s));
    assert.ok(
      t.rows.some((r) => /^ ?\d+ gemv_rows$/.test(r.kernel)),
      t.rows.map((r) => r.kernel).join(', '),
    );
    model.dispose();
  });
});
