// Rollout on remote servers (`actor_rollout_ref.rollout.name=vllm|sglang` with `server_urls`): one
// generator over all of them (balanced, a trajectory's steps sticky to one server, a server that is
// down skipped), and the weight push after every update: the policy is saved as a Hugging Face
// folder under the run's folder and every server loads it through its own documented route
// (vLLM: POST /collective_rpc reload_weights, then /reset_prefix_cache, see engine/vllm.ts; SGLang:
// POST /update_weights_from_disk, tagged with the version, see engine/sglang.ts).
// Servers must read the trainer's disk (same machine, or shared storage at the same path).
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Generator, GeneratorRouter, SglangGenerator, VllmGenerator } from '../engine/index.js';
import { AgentR1Error } from '../errors.js';
import { type CausalLM, saveCausalLM } from '../models/index.js';

/** The server APIs a rollout can run on (`actor_rollout_ref.rollout.name`). */
export type RolloutServerApi = 'vllm' | 'sglang';

export const ROLLOUT_SERVER_LABELS: Record<RolloutServerApi, string> = { vllm: 'vLLM', sglang: 'SGLang' };

interface ServerClient {
  name: string;
  generator: Generator;
  /** Makes the server load the weights saved in `dir` (a folder it can read) as `version`. */
  loadWeights(dir: string, version: string): Promise<void>;
}

function serverClient(api: RolloutServerApi, url: string): ServerClient {
  if (api === 'vllm') {
    const c = new VllmGenerator({ baseUrl: url });
    return { name: c.serverRoot, generator: c, loadWeights: (dir) => c.reloadWeights(dir) };
  }
  const c = new SglangGenerator({ baseUrl: url });
  return { name: c.baseUrl, generator: c, loadWeights: (dir, version) => c.updateWeightsFromDisk(dir, version) };
}

export interface RolloutServers {
  generator: GeneratorRouter;
  /** Saves the policy and makes every server load it; resolves when all have. */
  syncWeights(policy: CausalLM, version: string): Promise<void>;
}

export function rolloutServers(
  api: RolloutServerApi,
  urls: readonly string[],
  runDir: string,
  onNote?: (line: string) => void,
): RolloutServers {
  const clients = urls.map((url) => serverClient(api, url));
  const generator = new GeneratorRouter(clients.map((c) => ({ name: c.name, generator: c.generator })));
  const root = resolve(runDir, 'rollout_weights');
  let previous: string | undefined;
  return {
    generator,
    async syncWeights(policy, version) {
      const dir = join(root, `v${version}`);
      saveCausalLM(policy, dir);
      const results = await Promise.allSettled(clients.map((c) => c.loadWeights(dir, version)));
      const failed: string[] = [];
      // A server left on old weights would generate off-policy samples: it leaves the rotation
      // until a later update reaches it. Only when none has the new weights does the run stop.
      results.forEach((r, i) => {
        generator.setEnabled(i, r.status === 'fulfilled');
        if (r.status === 'rejected') failed.push(`${clients[i].name}: ${(r.reason as Error).message}`);
      });
      if (failed.length === clients.length)
        throw new AgentR1Error(`weights v${version} reached no rollout server:\n  ${failed.join('\n  ')}`);
      if (failed.length)
        onNote?.(
          `weights v${version} missed ${failed.length} server(s), left out until they load:\n  ${failed.join('\n  ')}`,
        );
      if (previous) rmSync(previous, { recursive: true, force: true });
      previous = dir;
    },
  };
}
