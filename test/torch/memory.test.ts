import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as torch from '../../src/torch/index.js';

test('scope frees everything made inside except what it returns', () => {
  const start = torch.liveTensors();
  const out = torch.scope(() => {
    const a = torch.ones([3]);
    const b = a.add(1);
    const c = b.mul(b);
    return { result: c, list: [a.sub(1)], n: 3 };
  });
  assert.equal(torch.liveTensors() - start, 2);
  assert.deepEqual(out.result.toArray(), [4, 4, 4]);
  out.result.dispose();
  out.list[0].dispose();
  assert.equal(torch.liveTensors(), start);
});

test('nested scopes hand returned tensors to the parent; keep() escapes all scopes', () => {
  const start = torch.liveTensors();
  let kept!: torch.Tensor;
  let escaped!: torch.Tensor;
  torch.scope(() => {
    escaped = torch.scope(() => {
      kept = torch.keep(torch.zeros([2]));
      return torch.ones([2]);
    });
    assert.equal(escaped.isDisposed, false);
  });
  assert.equal(escaped.isDisposed, true, 'the outer scope freed what the inner one returned');
  assert.equal(kept.isDisposed, false);
  assert.equal(torch.liveTensors() - start, 1);
  kept.dispose();
  assert.equal(torch.liveTensors(), start);
});

test('a scope frees its tensors when its function throws', () => {
  const start = torch.liveTensors();
  assert.throws(
    () =>
      torch.scope(() => {
        torch.ones([2]);
        torch.ones([3]).matmul(torch.ones([4, 4]));
      }),
    torch.TorchError,
  );
  assert.equal(torch.liveTensors(), start);
});

test('using declarations dispose at block end; using a disposed tensor is a clear error', () => {
  const start = torch.liveTensors();
  let ref!: torch.Tensor;
  {
    using t = torch.ones([2]);
    ref = t;
    assert.equal(torch.liveTensors(), start + 1);
  }
  assert.equal(torch.liveTensors(), start);
  assert.throws(
    () => ref.add(1),
    (e: unknown) => e instanceof torch.TorchError && e.kind === 'disposed' && /disposed/.test(e.message),
  );
  ref.dispose(); // twice is harmless
});

test('async scopes track tensors across awaits without mixing concurrent scopes', async () => {
  const start = torch.liveTensors();
  const run = (n: number) =>
    torch.scopeAsync(async () => {
      const a = torch.full([1], n);
      await new Promise((r) => setTimeout(r, 5 * n));
      const b = a.mul(2);
      await new Promise((r) => setTimeout(r, 1));
      return b;
    });
  const [x, y] = await Promise.all([run(2), run(1)]);
  assert.deepEqual([x.item(), y.item()], [4, 2]);
  assert.equal(torch.liveTensors() - start, 2);
  x.dispose();
  y.dispose();
  assert.equal(torch.liveTensors(), start);
});

test('a full training step inside a scope leaves the live-tensor count where it started', () => {
  torch.manualSeed(0);
  const w1 = torch.keep(torch.randn([8, 4]).mul(0.1).requiresGrad_());
  const w2 = torch.keep(torch.randn([1, 8]).mul(0.1).requiresGrad_());
  const opt = new torch.AdamW(
    [
      ['w1', w1],
      ['w2', w2],
    ],
    { lr: 1e-2 },
  );
  const x = torch.keep(torch.randn([16, 4]));
  const y = torch.keep(x.sum(1, true).tanh());
  const step = () =>
    torch.scope(() => {
      const pred = torch.linear(torch.linear(x, w1).silu(), w2);
      const loss = pred.sub(y).pow(2).mean();
      loss.backward();
      torch.clipGradNorm([w1, w2], 1.0);
      opt.step();
      opt.zeroGrad();
      return loss.item();
    });
  step(); // the optimizer makes its state on the first step
  const start = torch.liveTensors();
  const losses = [];
  for (let i = 0; i < 30; i++) losses.push(step());
  assert.equal(torch.liveTensors(), start);
  assert.ok(losses[29] < losses[0] * 0.5, `loss fell from ${losses[0]} to ${losses[29]}`);
});

test('dataPtr: a view lies where its base does (offset by its elements), a copy elsewhere', () => {
  torch.scope(() => {
    const a = torch.zeros([4, 8], { dtype: 'float32' });
    const p = a.dataPtr();
    assert.ok(Number.isSafeInteger(p) && p > 0, `${p}`);
    assert.equal(a.view(32).dataPtr(), p);
    assert.equal(a.narrow(0, 1, 2).dataPtr(), p + 8 * 4);
    assert.notEqual(a.clone().dataPtr(), p);
  });
});
