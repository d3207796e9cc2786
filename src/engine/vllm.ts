// A Generator over a stock `vllm serve`: generation through its OpenAI-compatible completions
// (RemoteGenerator: prompt token ids in, token ids and logprobs out, `seed` per request), and new
// weights after an update read from a Hugging Face folder on disk, in place, through vLLM's HTTP
// admin routes. `agent-r1 serve` answers the same routes, so the whole path runs in our tests.
//
// The weight reload, as vLLM documents it: with VLLM_SERVER_DEV_MODE=1, `vllm serve` exposes
//   POST /collective_rpc { method: 'reload_weights', kwargs: { weights_path } } -> { results: [...] }
// which runs GPUModelRunner.reload_weights(weights_path=...) on every worker (layerwise reload in
// checkpoint format; the model_loader.reload module is in vLLM's API docs from v0.18.0, and its
// examples/rl/skip_loading_weights_in_engine_init.py drives the same method through collective_rpc),
// then POST /reset_prefix_cache, since cached prefixes were computed by the old weights. vLLM's
// other RL route family (/init_weight_transfer_engine, /update_weights) moves tensors over NCCL or
// CUDA IPC, which a trainer on another process and device type cannot join; a folder on disk can be
// read by any server that sees the trainer's storage.
import { JsonHttpClient, RemoteGeneratorError } from './http-client.js';
import { RemoteGenerator, type RemoteGeneratorOptions } from './remote.js';

export class VllmGenerator extends RemoteGenerator {
  /** The server's root, without /v1: where vLLM's admin routes live. */
  readonly serverRoot: string;
  private readonly admin: JsonHttpClient;

  constructor(options: RemoteGeneratorOptions) {
    super(options);
    this.serverRoot = this.baseUrl.replace(/\/v1$/, '');
    this.admin = new JsonHttpClient(this.serverRoot, options);
  }

  /** Makes every worker of the server load the weights in `weightsPath` (a folder it can read) in place. */
  async reloadWeights(weightsPath: string): Promise<void> {
    try {
      const res = (await this.admin.call('POST', '/collective_rpc', {
        method: 'reload_weights',
        kwargs: { weights_path: weightsPath },
      })) as { results?: unknown } | null;
      if (!Array.isArray(res?.results))
        throw new RemoteGeneratorError(
          `${this.serverRoot}/collective_rpc answered ${JSON.stringify(res)} instead of { results: [...] }`,
          200,
          1,
        );
      await this.admin.call('POST', '/reset_prefix_cache', undefined);
    } catch (e) {
      if (e instanceof RemoteGeneratorError && e.status === 404)
        throw new RemoteGeneratorError(
          `${e.message}; vLLM serves /collective_rpc and /reset_prefix_cache only in dev mode: start it with VLLM_SERVER_DEV_MODE=1`,
          404,
          e.attempts,
          { cause: e },
        );
      throw e;
    }
  }
}
