// Rollout on servers through vLLM's API, and servers that go down: `agent-r1 serve` answers vLLM's
// completions and its dev-mode weight reload (POST /collective_rpc reload_weights, then
// /reset_prefix_cache); VllmGenerator gets the engine's own greedy ids through it, honours
// per-request seeds, and a reload changes what it generates; `agent-r1 train` with
// rollout.name=vllm trains 2 steps on a served model whose weights then equal the trainer's; with
// two servers, one stopped mid-run is retried, skipped and counted while training goes on; with
// every server down the run stops with an error naming them.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { VllmGenerator } from '../../src/engine/index.js';
import { freePort } from '../../src/cli/launch.js';
import { startServing, type ServingModel } from '../../src/cli/serve.js';
import { trainerFromConfig } from '../../src/cli/training-run.js';
import {
  assertServerHoldsTrainerWeights,
  engineIds,
  greedy,
  prompt,
  remoteTrainConfig,
  trainTwoStepsOnServe,
  closeServed,
  hostRoot,
  servedTinyModels,
} from '../helpers/remote-train.js';

torch.setNumThreads(1);

let dir: string;
let modelA: string;
let modelB: string;
let server: ServingModel;

before(async () => {
  ({ dir, modelA, modelB, server } = await servedTinyModels('agent-r1-vllm-'));
});
after(() => closeServed({ dir, server }));

describe('agent-r1 serve over the vLLM API', () => {
  it('generates the engine’s greedy ids with logprobs, then the new model’s after reload_weights', async () => {
    const client = new VllmGenerator({ baseUrl: server.url, maxRetries: 0 });
    assert.equal(client.serverRoot, hostRoot(server));
    const expectedA = await engineIds(modelA);
    const expectedB = await engineIds(modelB);
    assert.notDeepEqual(expectedA, expectedB, 'the two random models must differ for this test to mean anything');
    const first = await client.generate(prompt, greedy);
    assert.deepEqual(first.tokenIds, expectedA);
    assert.equal(first.logprobs?.length, expectedA.length);
    assert.ok(first.logprobs!.every((x) => Number.isFinite(x) && x <= 0));
    await client.reloadWeights(modelB);
    assert.deepEqual((await client.generate(prompt, greedy)).tokenIds, expectedB);
    await client.reloadWeights(modelA);
    assert.deepEqual((await client.generate(prompt, greedy)).tokenIds, expectedA);
  });

  it('a folder that does not load is refused with the reason, and the old weights stay', async () => {
    const client = new VllmGenerator({ baseUrl: server.url, maxRetries: 0 });
    await assert.rejects(
      client.reloadWeights(join(dir, 'nowhere')),
      /collective_rpc failed: HTTP 400: reload_weights\(.*nowhere\) failed: no config.json in model folder/,
    );
    assert.deepEqual((await client.generate(prompt, greedy)).tokenIds, await engineIds(modelA));
    const other = await fetch(`${hostRoot(server)}/collective_rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'sleep' }),
    });
    assert.equal(other.status, 400);
    assert.match(((await other.json()) as { error: { message: string } }).error.message, /runs only 'reload_weights'/);
  });

  it('honours per-request seeds: the same seed gives the same tokens, other seeds others', async () => {
    const client = new VllmGenerator({ baseUrl: server.url, maxRetries: 0 });
    const sampled = (seed: number) =>
      client.generate(prompt, { maxTokens: 8, temperature: 1, ignoreEos: true, seed }).then((r) => r.tokenIds);
    const a = await sampled(11);
    assert.equal(a.length, 8);
    assert.deepEqual(await sampled(11), a);
    const others = await Promise.all([12, 13, 14].map(sampled));
    assert.ok(
      others.some((o) => o.join() !== a.join()),
      'a random model sampled at temperature 1 differs across seeds',
    );
  });

  it('says to start vLLM in dev mode when the reload route is missing', async () => {
    // a server without the dev-mode routes, as `vllm serve` without VLLM_SERVER_DEV_MODE=1 answers them
    const plain = createServer((_req, res) =>
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"Not Found"}'),
    );
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    try {
      const client = new VllmGenerator({ baseUrl: `http://127.0.0.1:${(plain.address() as AddressInfo).port}` });
      await assert.rejects(client.reloadWeights(modelB), /HTTP 404: Not Found.*VLLM_SERVER_DEV_MODE=1/);
    } finally {
      plain.close();
    }
  });
});

describe('agent-r1 train with rollout.name=vllm', () => {
  it('trains 2 steps on a served model; afterwards the server holds the trainer’s weights', async () => {
    await trainTwoStepsOnServe({ dir: mkdtempSync(join(dir, 'train-')), modelDir: modelA, api: 'vllm' });
  });
});

describe('rollout servers that go down', () => {
  it('a server stopped after step 1 is retried, skipped and counted; training goes on with the other', async () => {
    const live = await startServing(modelA, { port: 0, device: 'cpu', maxNumSeqs: 4, maxModelLen: 1100 });
    const doomed = await startServing(modelA, { port: 0, device: 'cpu', maxNumSeqs: 4, maxModelLen: 1100 });
    const runDir = mkdtempSync(join(dir, 'down-'));
    let doomedClosed: Promise<void> | undefined;
    try {
      const cfg = remoteTrainConfig({ dir: runDir, modelDir: modelA, api: 'vllm', urls: [live.url, doomed.url] });
      const lines: string[] = [];
      const steps: Record<string, number>[] = [];
      const run = await trainerFromConfig(cfg, {
        log: (l) => lines.push(l),
        onMetrics: (step, m) => {
          steps.push({ ...m });
          if (step === 1) doomedClosed = doomed.close();
        },
      });
      try {
        const last = await run.trainer.fit();
        assert.equal(last['training/global_step'], 2);
        assert.equal(steps[0]['rollout/server_skips'], 0);
        assert.equal(steps[0]['rollout/servers_down'], 0);
        // step 2: the stopped server's requests failed after their retries and moved to the live one
        assert.ok(last['rollout/server_skips'] >= 1, `skips at step 2: ${last['rollout/server_skips']}`);
        assert.equal(last['rollout/servers_down'], 1);
        assert.equal(last['rollout/num_failed'] ?? 0, 0, 'no trajectory lost to the stopped server');
        // and it missed weights v2, so it left the rotation, said so, naming it
        assert.ok(
          lines.some((l) => l.includes('weights v2 missed 1 server(s)') && l.includes(hostRoot(doomed))),
          lines.join('\n'),
        );
        assertServerHoldsTrainerWeights(live.model, run.policy, modelA);
      } finally {
        run.dispose();
      }
    } finally {
      await live.close();
      await (doomedClosed ?? doomed.close());
    }
  });

  it('with every server down the run stops with an error naming them', async () => {
    const deadPort = await freePort();
    const url = `http://127.0.0.1:${deadPort}`;
    const runDir = mkdtempSync(join(dir, 'dead-'));
    const cfg = remoteTrainConfig({ dir: runDir, modelDir: modelA, api: 'vllm', urls: [url], steps: 1 });
    const run = await trainerFromConfig(cfg);
    try {
      await assert.rejects(run.trainer.fit(), (e: Error) => {
        assert.match(
          e.message,
          new RegExp(`every rollout server is down:\\n  ${url}: GET /models to ${url}/v1 failed after 4 attempts`),
        );
        return true;
      });
    } finally {
      run.dispose();
    }
  });
});
