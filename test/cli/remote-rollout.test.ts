// Rollout on servers: `agent-r1 serve` (startServing) answers SGLang's /generate and
// /update_weights_from_disk; SglangGenerator gets the engine's own greedy ids through it; a weight
// update changes what it generates; request limits answer 400/429; GeneratorRouter keeps a
// trajectory on one server and skips a dead one; and `agent-r1 train` with rollout.name=sglang
// trains 2 steps on a served model whose weights then equal the trainer's.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as torch from '../../src/torch/index.js';
import { GeneratorRouter, RemoteGeneratorError, SglangGenerator } from '../../src/engine/index.js';
import type { Generator } from '../../src/engine/index.js';
import { freePort } from '../../src/cli/launch.js';
import { startServing, type ServingModel } from '../../src/cli/serve.js';
import {
  closeServed,
  engineIds,
  greedy,
  hostRoot,
  prompt,
  servedTinyModels,
  trainTwoStepsOnServe,
} from '../helpers/remote-train.js';

torch.setNumThreads(1);
const root = fileURLToPath(new URL('../..', import.meta.url));

let dir: string;
let modelA: string;
let modelB: string;
let server: ServingModel;

before(async () => {
  ({ dir, modelA, modelB, server } = await servedTinyModels('agent-r1-remote-'));
});
after(() => closeServed({ dir, server }));

describe('agent-r1 serve over the SGLang API', () => {
  it('generates the engine’s greedy ids with logprobs, then the new model’s after update_weights_from_disk', async () => {
    const client = new SglangGenerator({ baseUrl: hostRoot(server), maxRetries: 0 });
    const expectedA = await engineIds(modelA);
    const expectedB = await engineIds(modelB);
    assert.notDeepEqual(expectedA, expectedB, 'the two random models must differ for this test to mean anything');
    const before = await client.generate(prompt, greedy);
    assert.deepEqual(before.tokenIds, expectedA);
    assert.equal(before.logprobs?.length, expectedA.length);
    assert.ok(before.logprobs!.every((x) => Number.isFinite(x) && x <= 0));
    assert.equal(before.policyVersion, 'default');
    await client.updateWeightsFromDisk(modelB, '7');
    const afterUpdate = await client.generate(prompt, greedy);
    assert.deepEqual(afterUpdate.tokenIds, expectedB);
    assert.equal(afterUpdate.policyVersion, '7');
    await client.updateWeightsFromDisk(modelA, '8');
    assert.deepEqual((await client.generate(prompt, greedy)).tokenIds, expectedA);
  });

  it('a folder that does not load is refused with the reason, and the old weights stay', async () => {
    const client = new SglangGenerator({ baseUrl: hostRoot(server), maxRetries: 0 });
    await assert.rejects(
      client.updateWeightsFromDisk(join(dir, 'nowhere'), '9'),
      /update_weights_from_disk failed: HTTP 400: no config.json in model folder .*nowhere/,
    );
    assert.equal((await client.generate(prompt, greedy)).policyVersion, '8');
  });

  it('refuses too many sequences in one request (400) and answers 429 over the queued-token limit', async () => {
    const small = await startServing(modelA, {
      port: 0,
      device: 'cpu',
      maxNumSeqs: 2,
      maxModelLen: 64,
      maxSequencesPerRequest: 2,
      maxQueuedTokens: 40,
    });
    try {
      const post = (body: unknown) =>
        fetch(`${small.url}/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const tooMany = await post({ prompt: [prompt], n: 3, max_tokens: 2 });
      assert.equal(tooMany.status, 400);
      assert.match(
        ((await tooMany.json()) as { error: { message: string } }).error.message,
        /3 sequences .* at most 2/,
      );
      // 5 prompt tokens + 30 new = 35 queued; a second request of 35 while the first runs goes over 40
      const first = post({ prompt, max_tokens: 30, temperature: 0 });
      const second = await post({ prompt, max_tokens: 30, temperature: 0 });
      assert.equal(second.status, 429);
      assert.match(((await second.json()) as { error: { message: string } }).error.message, /retry later/);
      assert.equal((await first).status, 200);
      // once the first is answered its tokens are released
      assert.equal((await post({ prompt, max_tokens: 30, temperature: 0 })).status, 200);
    } finally {
      await small.close();
    }
  });
});

describe('GeneratorRouter', () => {
  /** A generator that records its calls. */
  const counting = (name: string, calls: string[]): Generator => ({
    generate: async () => {
      calls.push(name);
      return { tokenIds: [1], finishReason: 'stop' };
    },
  });

  it('keeps a route key on one server and spreads keys over the servers', async () => {
    const calls: string[] = [];
    const router = new GeneratorRouter([
      { name: 'a', generator: counting('a', calls) },
      { name: 'b', generator: counting('b', calls) },
    ]);
    // two trajectories in flight at once: the least busy server takes the second key
    await Promise.all([
      router.generate([1], greedy, { routeKey: 't1' }),
      router.generate([1], greedy, { routeKey: 't2' }),
    ]);
    for (let i = 0; i < 3; i++) {
      await router.generate([1], greedy, { routeKey: 't1' });
      await router.generate([1], greedy, { routeKey: 't2' });
    }
    const t1 = calls.filter((_, i) => i % 2 === 0);
    assert.deepEqual(new Set(calls), new Set(['a', 'b']));
    assert.equal(new Set(t1).size, 1, 'every step of t1 on one server');
  });

  it('skips a server that is down, counts it, and fails only when every server is down', async () => {
    // a port with nothing listening: take a free one and close it
    const deadPort = await freePort();
    const dead = new SglangGenerator({ baseUrl: `http://127.0.0.1:${deadPort}`, maxRetries: 1, retryDelayMs: 10 });
    const live = new SglangGenerator({ baseUrl: hostRoot(server), maxRetries: 0 });
    const router = new GeneratorRouter([
      { name: 'dead', generator: dead },
      { name: 'live', generator: live },
    ]);
    const out = await router.generate(prompt, greedy, { routeKey: 'x' });
    assert.equal(out.tokenIds.length, greedy.maxTokens);
    assert.equal(router.metrics()['rollout/server_skips'], 1);
    const onlyDead = new GeneratorRouter([{ name: 'dead', generator: dead }]);
    await assert.rejects(onlyDead.generate(prompt, greedy), /every rollout server is down[\s\S]*dead/);
    // a refused request (4xx) is not a dead server: it fails at once, nothing skipped
    const refusing = new GeneratorRouter([{ name: 'live', generator: live }]);
    await assert.rejects(refusing.generate([], greedy), (e: unknown) => e instanceof RemoteGeneratorError);
    assert.equal(refusing.metrics()['rollout/server_skips'], 0);
  });
});

describe('agent-r1 train with rollout.name=sglang', () => {
  it('trains 2 steps on a served model; afterwards the server holds the trainer’s weights', async () => {
    await trainTwoStepsOnServe({ dir: dir, modelDir: modelA, api: 'sglang' });
  });
});

describe('the agent-r1 serve command', () => {
  const main = join(root, 'src', 'cli', 'main.ts');

  it('starts on 127.0.0.1, says where, serves, and stops on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', main, 'serve', modelA, '--port', '0', '--device', 'cpu'],
      {
        env: { ...process.env, OMP_NUM_THREADS: '1' },
      },
    );
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /at (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(out);
          if (m) resolve(m[1]);
        });
        child.once('exit', (code) => reject(new Error(`serve exited (${code}) before listening: ${out}`)));
      });
      const models = (await (await fetch(`${url}/models`)).json()) as { data: { id: string }[] };
      assert.equal(models.data[0].id, 'a', 'the folder name is the served model name');
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('a folder without config.json is a clear error, exit code 2', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', main, 'serve', join(dir, 'nowhere')], {
      encoding: 'utf8',
    });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /nowhere' is not a Hugging Face model folder \(no config\.json\)/);
  });
});
