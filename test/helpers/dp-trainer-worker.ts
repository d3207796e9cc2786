// One process of the data-parallel trainer test: a tiny policy trains one step of the first-token
// task on a scripted (deterministic) generator, alone on the whole batch or, with the torchrun
// variables set, as one Gloo rank on its share; its parameters (and the critic's, `critic.` before
// their names, for gae) go to $OUT (safetensors). $ADV picks the estimator (default grpo).
import * as torch from '../../src/torch/index.js';
import { Engine } from '../../src/engine/index.js';
import { DataParallel, Trainer } from '../../src/trainer/index.js';
import { firstTokenSamples, ScriptedPolicy } from '../../src/testing/index.js';
import { tinyPolicy, tokenizer } from '../trainer/helpers.js';

const group = torch.processGroupFromEnv('gloo', 60_000);
const dataParallel = group ? new DataParallel(group) : undefined;
// The same prompt answers 3, 4, 5, 6, 3, ... on its successive calls: rewards vary inside a group
// and do not depend on which other prompts share the process.
const calls = new Map<string, number>();
const generator = new ScriptedPolicy((promptIds) => {
  const key = promptIds.join(',');
  const k = calls.get(key) ?? 0;
  calls.set(key, k + 1);
  return [3 + ((k + promptIds.length) % 4), 2];
});
const advEstimator = process.env.ADV ?? 'grpo';
const policy = tinyPolicy({ seed: 1, dtype: 'float64' });
// $ENGINE: the in-process engine samples instead (random, from the seeds the trainer sets), and
// every row has the same prompt; each process's rollout is dumped under $ROLLOUTS.
const engine = process.env.ENGINE ? new Engine(policy, { maxBatchSize: 32, maxLength: 16 }) : undefined;
const prompts = engine ? [[5, 6]] : [[5, 6], [7, 8, 9], [10], [11, 12, 13, 14]];
const critic =
  advEstimator === 'gae' ? tinyPolicy({ seed: 5, dtype: 'float64', valueHead: true, lmHead: false }) : undefined;
const trainer = new Trainer(
  {
    policy,
    critic,
    generator: engine ?? generator,
    tokenizer,
    trainData: firstTokenSamples(8, { target: 4, prompts }),
    ...(dataParallel ? { dataParallel } : {}),
  },
  {
    data: { trainBatchSize: 4, seed: 3, shuffle: false },
    rollout: { n: 4, sampling: { maxTokens: 2, temperature: 1 } },
    actor: {
      optim: { lr: 5e-2, weightDecay: 0 },
      ppoMiniBatchSize: Number(process.env.MINI ?? 4),
      lossAggMode: (process.env.AGG ?? 'token-mean') as 'token-mean',
    },
    critic: { optim: { lr: 5e-2, weightDecay: 0 } },
    algorithm: { advEstimator },
    trainer: {
      console: false,
      totalTrainingSteps: 1,
      rlDtype: 'float64',
      ...(process.env.ROLLOUTS ? { rolloutDataDir: process.env.ROLLOUTS } : {}),
    },
  },
);
const metrics = await trainer.fit();
const params = new Map(policy.namedParameters());
for (const [name, p] of critic?.namedParameters() ?? []) params.set(`critic.${name}`, p);
torch.writeSafetensors(process.env.OUT!, params);
console.log(
  JSON.stringify({
    rank: group?.rank ?? -1,
    // the dataset rows this process rolled out at step 0 (each with its n samples: a whole group)
    batch: trainer.batchAt(0).map((s) => (s.extra_info as { index: number }).index),
    pgLoss: metrics['actor/pg_loss'],
    steps: metrics['actor/optimizer_steps'],
  }),
);
trainer.dispose();
engine?.dispose();
critic?.dispose();
group?.destroy();
