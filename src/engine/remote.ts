// A Generator against any OpenAI-compatible completions server that returns token ids: vLLM
// (`return_token_ids`, or logprobs with `return_tokens_as_token_ids`), SGLang, or agent-r1's own
// server (server.ts). Token ids in, token ids and logprobs out; nothing is re-tokenized.
//
// Failures are never silent: a request either resolves (ids, or finish 'abort' when the caller's
// signal aborts it) or rejects with a RemoteGeneratorError saying what happened on every attempt
// (retries: http-client.ts).
//
// Logprobs: vLLM V1 reports by default the logprobs of the raw model distribution (temperature 1,
// its `--logprobs-mode raw_logprobs`), while our engine reports them at the request's temperature.
// At temperature 1 without top-k/top-p they agree. Otherwise a trainer that compares them with
// `model.logprobs(..., { temperature })` should recompute old logprobs, or start vLLM with
// `--logprobs-mode processed_logprobs` after checking what that mode applies in its version.
import type { GenerateResult, Generator, SamplingParams } from './generator.js';
import { type HttpClientOptions, JsonHttpClient, RemoteGeneratorError } from './http-client.js';

export { RemoteGeneratorError } from './http-client.js';

export interface RemoteGeneratorOptions extends HttpClientOptions {
  /** The server's API root: 'http://host:port/v1' ('/v1' is added when missing). */
  baseUrl: string;
  /** The model name to send; default: the first id /v1/models lists (asked once). */
  model?: string;
  /** Extra fields merged into every request body (e.g. { skip_special_tokens: false }, server-specific options). */
  extraBody?: Record<string, unknown>;
}

/** Reads token ids: `choices[].token_ids` (vLLM return_token_ids), else logprobs tokens 'token_id:N'. */
export function tokenIdsOfChoice(choice: Record<string, unknown>): number[] | null {
  if (Array.isArray(choice.token_ids)) return choice.token_ids as number[];
  const lp = choice.logprobs as { tokens?: unknown } | null | undefined;
  if (lp && Array.isArray(lp.tokens)) {
    const ids = lp.tokens.map((t) => (typeof t === 'string' && /^token_id:\d+$/.test(t) ? Number(t.slice(9)) : NaN));
    if (ids.every(Number.isInteger)) return ids;
  }
  return null;
}

function finishOf(reason: unknown): GenerateResult['finishReason'] {
  if (reason === 'length') return 'length';
  if (reason === 'abort' || reason === 'cancelled') return 'abort';
  return 'stop';
}

export class RemoteGenerator implements Generator {
  readonly baseUrl: string;
  private model: Promise<string> | null;
  private readonly http: JsonHttpClient;

  constructor(private readonly options: RemoteGeneratorOptions) {
    const trimmed = options.baseUrl.replace(/\/+$/, '');
    this.baseUrl = trimmed.endsWith('/v1') ? trimmed : `${trimmed}/v1`;
    this.model = options.model ? Promise.resolve(options.model) : null;
    this.http = new JsonHttpClient(this.baseUrl, options);
  }

  /** The served model's name (from /v1/models unless given). */
  modelName(signal?: AbortSignal): Promise<string> {
    this.model ??= (async () => {
      const body = (await this.http.call('GET', '/models', undefined, signal)) as { data?: { id?: string }[] };
      const id = body.data?.[0]?.id;
      if (typeof id !== 'string') throw new RemoteGeneratorError(`${this.baseUrl}/models lists no model`, 200, 1);
      return id;
    })().catch((e) => {
      this.model = null;
      throw e;
    });
    return this.model;
  }

  /** The request body sent for one generation (vLLM's completions fields). */
  requestBody(model: string, promptIds: readonly number[], s: SamplingParams): Record<string, unknown> {
    return {
      model,
      prompt: [...promptIds],
      max_tokens: s.maxTokens,
      temperature: s.temperature ?? 1,
      ...(s.topP !== undefined ? { top_p: s.topP } : {}),
      ...(s.topK !== undefined && s.topK > 0 ? { top_k: s.topK } : {}), // off is left out (older vLLM refuses top_k 0)
      ...(s.stopTokenIds?.length ? { stop_token_ids: s.stopTokenIds } : {}),
      ...(s.stop?.length ? { stop: s.stop } : {}),
      ...(s.seed !== undefined ? { seed: s.seed } : {}),
      ...(s.ignoreEos ? { ignore_eos: true } : {}), // one of vLLM's extra sampling fields
      logprobs: 0,
      return_tokens_as_token_ids: true,
      return_token_ids: true,
      ...this.options.extraBody,
    };
  }

  async generate(
    promptIds: readonly number[],
    sampling: SamplingParams,
    opts: { signal?: AbortSignal } = {},
  ): Promise<GenerateResult> {
    const signal = opts.signal;
    const aborted: GenerateResult = { tokenIds: [], logprobs: [], finishReason: 'abort' };
    if (signal?.aborted) return aborted;
    try {
      const model = await this.modelName(signal);
      const body = this.requestBody(model, promptIds, sampling);
      return await this.http.withRetries('POST /v1/completions', signal, async (s) => {
        const res = (await this.http.once('POST', '/completions', body, s)) as {
          choices?: Record<string, unknown>[];
        };
        const choice = res.choices?.[0];
        if (!choice) throw new RemoteGeneratorError(`${this.baseUrl}/completions answered without choices`, 200, 1);
        const tokenIds = tokenIdsOfChoice(choice);
        if (!tokenIds) {
          throw new RemoteGeneratorError(
            `${this.baseUrl}/completions returned no token ids: the server must support return_token_ids ` +
              'or logprobs with return_tokens_as_token_ids (vLLM does)',
            200,
            1,
          );
        }
        const lp = (choice.logprobs as { token_logprobs?: (number | null)[] } | null | undefined)?.token_logprobs;
        const result: GenerateResult = { tokenIds, finishReason: finishOf(choice.finish_reason) };
        if (Array.isArray(lp) && lp.length === tokenIds.length)
          result.logprobs = lp.map((x) => (typeof x === 'number' ? x : NaN));
        return result;
      });
    } catch (e) {
      if (signal?.aborted) return aborted;
      throw e;
    }
  }
}
