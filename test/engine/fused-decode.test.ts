// What the fused decode path says where it cannot run (the kernels themselves are tested on CUDA,
// test/engine/cuda.test.ts): a CPU-only addon refuses each kernel entry point with a message that
// names the CUDA build, rather than running something else.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';

const cudaBuild = torch.hasFusedDecodeKernels();

describe('fused decode kernels on a CPU-only addon', { skip: cudaBuild && 'this addon has the CUDA kernels' }, () => {
  const needsCuda = /built against a CUDA libtorch/;

  it('gemvRows, addRmsNormGemvRows and the dependent-launch switch name the CUDA build they need', () => {
    torch.scope(() => {
      const x = torch.zeros([1, 16]).to('bfloat16');
      const w = torch.zeros([8, 16]).to('bfloat16');
      const n = torch.ones([16]).to('bfloat16');
      assert.throws(() => torch.gemvRows(x, w, null), needsCuda);
      assert.throws(() => torch.gemvRows(torch.zeros([1, 32]).to('bfloat16'), w, null, { siluMul: true }), needsCuda);
      assert.throws(() => torch.addRmsNormGemvRows(x, null, n, 1e-6, w, null), needsCuda);
      assert.throws(() => torch.setDependentLaunches(false), needsCuda);
      assert.throws(() => torch.dependentLaunches(), needsCuda);
    });
  });

  it('the decode trunk says it needs the CUDA build, and refuses to run without it', () => {
    const shape = {
      hidden: 64,
      numHeads: 4,
      numKvHeads: 2,
      headDim: 64,
      intermediate: 128,
      layers: 2,
      rows: 1,
      blockSize: 16,
    };
    assert.match(torch.decodeTrunkUnsupported('cuda:0', shape) ?? '', needsCuda);
    assert.match(torch.decodeTrunkUnsupported('cpu', shape) ?? '', /runs on CUDA/);
    torch.scope(() => {
      const x = torch.zeros([1, 64]).to('bfloat16');
      const idx = torch.zeros([1], { dtype: 'int64' });
      const o = {
        positions: idx,
        slots: idx,
        blockTables: idx.view(1, 1),
        invFreq: torch.zeros([32]),
        blockSize: 16,
        eps: 1e-6,
        scale: 1,
      };
      assert.throws(() => torch.decodeTrunk(x, [], o), needsCuda);
    });
  });
});
