// One Gloo rank of the ZeroAdamW unit test: three float64 parameters (15, 7 and 4 elements) in
// buckets of at most 10 elements (three buckets, each padded to 2 slices), rank-dependent
// gradients, 2 steps with clipping. Each rank also runs the reference on its own: AdamW on a copy,
// the gradients summed over both ranks by hand, clipGradNorm. Prints one JSON line of differences.
import * as torch from '../../src/torch/index.js';
import { DataParallel, ZeroAdamW } from '../../src/trainer/index.js';

torch.setNumThreads(1);
const group = torch.processGroupFromEnv('gloo', 30_000);
if (!group) throw new Error('no torchrun environment');
const dp = new DataParallel(group);
const shapes = [[3, 5], [7], [2, 2]];
const start = () =>
  shapes.map((s, i): [string, torch.Tensor] => {
    const n = s.reduce((a, b) => a * b, 1);
    const values = Array.from({ length: n }, (_, j) => Math.sin(1 + i * 7 + j));
    return [`p${i}`, torch.keep(torch.tensor(values, { dtype: 'float64', shape: s }).requiresGrad_())];
  });
/** Rank r's gradient of parameter i at step k. */
const gradOf = (r: number, i: number, k: number, p: torch.Tensor) => {
  const values = Array.from({ length: p.numel }, (_, j) => Math.cos(r * 3 + i * 5 + j * (k + 1)) * (r + 1));
  return torch.tensor(values, { dtype: 'float64', shape: p.shape });
};
const opts = { lr: 0.1, weightDecay: 0.01 };
const maxNorm = 1.5;
const sharded = start();
const reference = start();
const zero = new ZeroAdamW(sharded, opts, dp, 10);
const plain = new torch.AdamW(reference, opts);
const norms: number[][] = [];
const stepBoth = (k: number) =>
  torch.noGrad(() => {
    sharded.forEach(([, p], i) => {
      p.grad = gradOf(group.rank, i, k, p);
    });
    reference.forEach(([, p], i) => {
      p.grad = gradOf(0, i, k, p).add(gradOf(1, i, k, p));
    });
    const n = [zero.reduceAndClipGrads(maxNorm), torch.clipGradNorm(reference, maxNorm)];
    norms.push(n);
    zero.step();
    plain.step();
    zero.zeroGrad();
    plain.zeroGrad();
  });
const maxDiff = (a: [string, torch.Tensor][], b: Map<string, torch.Tensor>) =>
  Math.max(...a.map(([k, t]) => torch.scope(() => t.sub(b.get(k)!).abs().max().item())));
stepBoth(0);
stepBoth(1);
const paramDiff = maxDiff(sharded, new Map(reference));
const local = [...zero.localState()].filter(([k]) => k.endsWith('.exp_avg')).map(([, t]) => t.numel);
zero.consolidateState();
let stateDiff: number | null = null;
let stateKeys: string[] | null = null;
if (group.rank === 0) {
  const gathered = zero.stateTensors();
  stateKeys = [...gathered.keys()].sort();
  stateDiff = maxDiff([...plain.stateTensors()], gathered);
}
// a fresh ZeroAdamW loaded from the reference's state steps on as the reference does
const resumed = start();
torch.noGrad(() => resumed.forEach(([, p], i) => p.copy_(reference[i][1])));
const again = new ZeroAdamW(resumed, opts, dp, 10);
again.loadStateTensors(plain.stateTensors());
torch.noGrad(() => {
  resumed.forEach(([, p], i) => {
    p.grad = gradOf(group.rank, i, 2, p);
  });
  reference.forEach(([, p], i) => {
    p.grad = gradOf(0, i, 2, p).add(gradOf(1, i, 2, p));
  });
  again.reduceAndClipGrads(maxNorm);
  torch.clipGradNorm(reference, maxNorm);
  again.step();
  plain.step();
});
const resumedDiff = maxDiff(resumed, new Map(reference));
console.log(
  JSON.stringify({
    rank: group.rank,
    paramDiff,
    stateDiff,
    stateKeys,
    local,
    norms,
    resumedDiff,
    bytes: zero.stateBytes(),
  }),
);
zero.dispose();
again.dispose();
group.destroy();
