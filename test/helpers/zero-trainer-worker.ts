// One process of the ZeRO-1 test: a tiny float64 policy and critic train PPO with GAE for $STEPS
// steps of the first-token task on a scripted generator whose answers depend only on the step (so
// a resumed run repeats them), alone on the whole batch or, with the torchrun variables set, as one
// Gloo rank on its share (its optimizers then shard their state). Checkpoints go to $CKPT every
// step; $RESUME resumes from one. Writes actor.* and critic.* parameters to $OUT (safetensors) and
// prints one JSON line with this rank's optimizer-state sizes.
import * as torch from '../../src/torch/index.js';
import { DataParallel, Trainer, ZeroAdamW } from '../../src/trainer/index.js';
import { firstTokenSamples, ScriptedPolicy } from '../../src/testing/index.js';
import { tinyPolicy, tokenizer } from '../trainer/helpers.js';

const group = torch.processGroupFromEnv('gloo', 60_000);
const dataParallel = group ? new DataParallel(group) : undefined;
// The same prompt answers 3, 4, 5, 6, 3, ... on its successive calls of a step (counted afresh each
// step, as the trainer reseeds before each rollout): rewards vary inside a group and depend neither
// on which prompts share the process nor on the rank-mixed seeds, so a resumed run repeats them.
const calls = new Map<string, number>();
const generator = Object.assign(
  new ScriptedPolicy((promptIds) => {
    const key = promptIds.join(',');
    const k = calls.get(key) ?? 0;
    calls.set(key, k + 1);
    return [3 + ((k + promptIds.length) % 4), 2];
  }),
  { reseed: () => calls.clear() },
);
const policy = tinyPolicy({ seed: 1, dtype: 'float64' });
const critic = tinyPolicy({ seed: 8, dtype: 'float64', valueHead: true, lmHead: false, init: 0.3 });
const resume = process.env.RESUME;
const trainer = new Trainer(
  {
    policy,
    critic,
    generator,
    tokenizer,
    trainData: firstTokenSamples(8, { target: 4, prompts: [[5, 6], [7, 8, 9], [10], [11, 12, 13, 14]] }),
    ...(dataParallel ? { dataParallel } : {}),
  },
  {
    data: { trainBatchSize: 4, seed: 3, shuffle: false },
    rollout: { n: 2, sampling: { maxTokens: 2, temperature: 1 } },
    actor: { optim: { lr: 5e-2, weightDecay: 0.01, gradClip: 0.5 }, ppoMiniBatchSize: 4 },
    critic: { optim: { lr: 5e-2, gradClip: 0.5 }, ppoMiniBatchSize: 4 },
    algorithm: { advEstimator: 'gae' },
    trainer: {
      console: false,
      totalTrainingSteps: Number(process.env.STEPS ?? 2),
      rlDtype: 'float64',
      saveFreq: 1,
      defaultLocalDir: process.env.CKPT!,
      ...(resume ? { resumeMode: 'resume_path' as const, resumeFromPath: resume } : {}),
    },
  },
);
const metrics = await trainer.fit();
torch.writeSafetensors(
  process.env.OUT!,
  new Map([
    ...policy.namedParameters().map(([k, t]): [string, torch.Tensor] => [`actor.${k}`, t]),
    ...critic.namedParameters().map(([k, t]): [string, torch.Tensor] => [`critic.${k}`, t]),
  ]),
);
/** Elements of this rank's exp_avg and exp_avg_sq, and of the parameters they are for. */
function stateSize(opt: Trainer['actorOptimizer'], model: typeof policy) {
  const local = opt instanceof ZeroAdamW ? opt.localState() : opt.stateTensors();
  let expAvg = 0;
  let expAvgSq = 0;
  for (const [k, t] of local) {
    if (k.endsWith('.exp_avg')) expAvg += t.numel;
    if (k.endsWith('.exp_avg_sq')) expAvgSq += t.numel;
  }
  const params = model.namedParameters().reduce((n, [, p]) => n + p.numel, 0);
  return { expAvg, expAvgSq, params, ...(opt instanceof ZeroAdamW ? { bytes: opt.stateBytes() } : {}) };
}
console.log(
  JSON.stringify({
    rank: group?.rank ?? -1,
    actorSteps: metrics['actor/optimizer_steps'],
    criticSteps: metrics['critic/optimizer_steps'],
    actor: stateSize(trainer.actorOptimizer, policy),
    critic: stateSize(trainer.criticOptimizer!, critic),
  }),
);
trainer.dispose();
group?.destroy();
