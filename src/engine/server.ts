// An OpenAI-compatible HTTP server over any Generator (node:http, no framework): POST
// /v1/completions with `prompt` as token ids, GET /v1/models, GET /health; vLLM's dev-mode weight
// reload, POST /collective_rpc with method 'reload_weights' and POST /reset_prefix_cache; and
// SGLang's native POST /generate (input_ids in, output_token_logprobs out) and POST
// /update_weights_from_disk, so a trainer drives this server exactly as it drives vLLM (vllm.ts)
// or SGLang (sglang.ts). Responses follow vLLM's
// completions API: `choices[i].token_ids` (with `return_token_ids`), `logprobs.tokens` as
// 'token_id:N' (with `return_tokens_as_token_ids`, or always when the server has no tokenizer),
// `logprobs.token_logprobs`; errors as OpenAI error JSON { error: { message, type, param, code } }.
//
// Differences from vLLM, on purpose: prompts must be token ids (no text prompts); `stream` is not
// supported; `logprobs: k` returns only the chosen token in `top_logprobs` (no alternatives);
// /collective_rpc runs only reload_weights, needs its `weights_path`, and answers a folder that
// does not load with 400 and the reason (vLLM: 500).
//
// Limits: a request of more than `maxSequencesPerRequest` sequences (prompts x n) is refused with
// 400; one that would bring the queued tokens (prompt + max_tokens of every request not yet
// answered) over `maxQueuedTokens` gets 429, which clients retry later, instead of waiting forever.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { AgentR1Error, UserError } from '../errors.js';
import type { GenerateResult, Generator, SamplingParams } from './generator.js';

export interface ServerOptions {
  /** Interface to listen on. Default '127.0.0.1' (loopback only). */
  host?: string;
  /** Port; 0 picks a free one. Default 8000. */
  port?: number;
  /** The id /v1/models lists and responses carry. Default 'agent-r1'. */
  modelName?: string;
  /** Turns ids into text for `choices[].text` and token strings; without one, text is '' and tokens are 'token_id:N'. */
  tokenizer?: { decode(ids: number[]): string };
  /** Largest request body in bytes. Default 64 MiB. */
  maxBodyBytes?: number;
  /** Reported by /v1/models as max_model_len. */
  maxModelLen?: number;
  /** Most sequences (prompts x n) in one request; more answers 400. Default 4096. */
  maxSequencesPerRequest?: number;
  /** Most tokens (prompt + max_tokens) queued over all unanswered requests; more answers 429. Default 4M. */
  maxQueuedTokens?: number;
  /**
   * Loads the weights saved in a folder into the served model (POST /update_weights_from_disk, and
   * /collective_rpc's reload_weights). Without it those routes answer 400.
   */
  updateWeights?: (modelPath: string) => void | Promise<void>;
  /** The weight version answered before any update (SGLang's default name). Default 'default'. */
  weightVersion?: string;
}

export interface RunningServer {
  /** The API root, e.g. http://127.0.0.1:8000/v1 */
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

/** An error the server reports with an HTTP status, as OpenAI error JSON. */
export class HttpError extends AgentR1Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly type = errorType(status),
  ) {
    super(message);
  }
}

function errorType(status: number): string {
  if (status === 400) return 'BadRequestError';
  if (status === 404) return 'NotFoundError';
  if (status === 405) return 'MethodNotAllowedError';
  if (status === 413) return 'RequestTooLargeError';
  if (status === 429) return 'RateLimitError';
  return 'InternalServerError';
}

/** The body of an OpenAI-style error response. */
export function errorBody(status: number, message: string, param: string | null = null, type = errorType(status)) {
  return { error: { message, type, param, code: status } };
}

/** A completions request read into sampling settings. Throws HttpError(400) naming the field. */
export interface CompletionJob {
  prompts: number[][];
  n: number;
  sampling: SamplingParams;
  logprobs: number | null;
  tokensAsIds: boolean;
  returnTokenIds: boolean;
  model: string | null;
}

function isIdList(v: unknown): v is number[] {
  return Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x) && x >= 0);
}

/**
 * The sampling fields the two request kinds share, read from `fields` (the body for completions,
 * `sampling_params` for /generate); errors name the field as `${prefix}${key}`.
 */
function readSampling(
  fields: Record<string, unknown>,
  prefix: string,
  names: { maxTokens: string; maxTokensDefault: number; seed: string },
): { sampling: SamplingParams; num: (key: string, check: (x: number) => boolean, what: string) => number | undefined } {
  const num = (key: string, check: (x: number) => boolean, what: string): number | undefined => {
    const v = fields[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !check(v))
      throw new HttpError(400, `'${prefix}${key}' must be ${what}, got ${JSON.stringify(v)}`, key);
    return v;
  };
  const stopTokenIds = fields.stop_token_ids ?? [];
  if (!Array.isArray(stopTokenIds) || !stopTokenIds.every((x) => Number.isInteger(x)))
    throw new HttpError(400, `'${prefix}stop_token_ids' must be a list of integers`, 'stop_token_ids');
  const rawStop = fields.stop;
  const stop = rawStop === undefined || rawStop === null ? [] : typeof rawStop === 'string' ? [rawStop] : rawStop;
  if (!Array.isArray(stop) || !stop.every((x) => typeof x === 'string'))
    throw new HttpError(400, `'${prefix}stop' must be a string or a list of strings`, 'stop');
  const sampling: SamplingParams = {
    maxTokens:
      num(names.maxTokens, (x) => Number.isInteger(x) && x >= 0, 'a non-negative integer') ?? names.maxTokensDefault,
    temperature: num('temperature', (x) => x >= 0, 'a number >= 0') ?? 1,
  };
  const topP = num('top_p', (x) => x > 0 && x <= 1, 'a number in (0, 1]');
  if (topP !== undefined) sampling.topP = topP;
  const topK = num('top_k', (x) => Number.isInteger(x) && x >= -1, 'an integer (0 or -1 for off)');
  if (topK !== undefined && topK > 0) sampling.topK = topK;
  if (stopTokenIds.length) sampling.stopTokenIds = stopTokenIds as number[];
  if (stop.length) sampling.stop = stop as string[];
  const seed = num(names.seed, Number.isInteger, 'an integer');
  if (seed !== undefined) sampling.seed = seed;
  if (fields.ignore_eos === true) sampling.ignoreEos = true;
  return { sampling, num };
}

export function parseCompletionRequest(body: unknown): CompletionJob {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new HttpError(400, 'the request body must be a JSON object');
  const b = body as Record<string, unknown>;
  let prompts: number[][];
  if (isIdList(b.prompt)) prompts = [b.prompt];
  else if (Array.isArray(b.prompt) && b.prompt.length > 0 && b.prompt.every(isIdList)) prompts = b.prompt as number[][];
  else if (
    typeof b.prompt === 'string' ||
    (Array.isArray(b.prompt) && b.prompt.every((x) => typeof x === 'string') && b.prompt.length > 0)
  ) {
    throw new HttpError(
      400,
      "'prompt' must be token ids (a list of non-negative integers, or a list of such lists); this server takes no text prompts",
      'prompt',
    );
  } else {
    throw new HttpError(400, "'prompt' is required: a non-empty list of token ids, or a list of such lists", 'prompt');
  }
  if (b.stream) throw new HttpError(400, "'stream' is not supported by this server", 'stream');
  if (b.echo) throw new HttpError(400, "'echo' is not supported by this server", 'echo');
  const { sampling, num } = readSampling(b, '', { maxTokens: 'max_tokens', maxTokensDefault: 16, seed: 'seed' });
  const logprobs = num('logprobs', (x) => Number.isInteger(x) && x >= -1, 'an integer >= 0 (or -1)') ?? null;
  return {
    prompts,
    sampling,
    logprobs,
    n: num('n', (x) => Number.isInteger(x) && x >= 1, 'a positive integer') ?? 1,
    tokensAsIds: b.return_tokens_as_token_ids === true,
    returnTokenIds: b.return_token_ids === true,
    model: typeof b.model === 'string' ? b.model : null,
  };
}

/** A SGLang-style /generate request (the fields of its GenerateReqInput that token-in/token-out uses). */
export interface GenerateJob {
  prompts: number[][];
  /** `input_ids` was a list of lists: the answer is a list too. */
  batched: boolean;
  sampling: SamplingParams;
  returnLogprob: boolean;
}

export function parseGenerateRequest(body: unknown): GenerateJob {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new HttpError(400, 'the request body must be a JSON object');
  const b = body as Record<string, unknown>;
  if (b.text !== undefined && b.text !== null)
    throw new HttpError(400, "'text' is not supported by this server: send 'input_ids' (token ids)", 'text');
  let prompts: number[][];
  let batched = false;
  if (isIdList(b.input_ids)) prompts = [b.input_ids];
  else if (Array.isArray(b.input_ids) && b.input_ids.length > 0 && b.input_ids.every(isIdList)) {
    prompts = b.input_ids as number[][];
    batched = true;
  } else
    throw new HttpError(
      400,
      "'input_ids' is required: a non-empty list of token ids, or a list of such lists",
      'input_ids',
    );
  if (b.stream) throw new HttpError(400, "'stream' is not supported by this server", 'stream');
  const sp = (b.sampling_params ?? {}) as Record<string, unknown>;
  if (typeof sp !== 'object' || Array.isArray(sp))
    throw new HttpError(400, "'sampling_params' must be an object", 'sampling_params');
  const { sampling } = readSampling(sp, 'sampling_params.', {
    maxTokens: 'max_new_tokens',
    maxTokensDefault: 128,
    seed: 'sampling_seed',
  });
  return { prompts, batched, sampling, returnLogprob: b.return_logprob === true };
}

function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new HttpError(413, `request body over ${limit} bytes`));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Serves `generator` (an `Engine`, or any Generator) as an OpenAI-compatible completions endpoint.
 * A client that disconnects aborts its requests.
 */
export async function serve(generator: Generator, o: ServerOptions = {}): Promise<RunningServer> {
  const modelName = o.modelName ?? 'agent-r1';
  const host = o.host ?? '127.0.0.1';
  const limit = o.maxBodyBytes ?? 64 << 20;
  const created = Math.floor(Date.now() / 1000);
  const maxSequences = o.maxSequencesPerRequest ?? 4096;
  const maxQueued = o.maxQueuedTokens ?? 4 << 20;
  let queuedTokens = 0;
  let weightVersion = o.weightVersion ?? 'default';

  /** Counts a request's tokens as queued until `release`; refuses it (400/429) over the limits. */
  function admit(prompts: number[][], n: number, maxTokens: number): () => void {
    const sequences = prompts.length * n;
    if (sequences > maxSequences) {
      throw new HttpError(
        400,
        `this request asks for ${sequences} sequences (prompts x n); this server takes at most ${maxSequences} per request: split it`,
      );
    }
    const tokens = n * prompts.reduce((a, p) => a + p.length, 0) + sequences * maxTokens;
    if (queuedTokens + tokens > maxQueued) {
      throw new HttpError(
        429,
        `the server has ${queuedTokens} tokens queued and this request adds ${tokens}, over its limit of ${maxQueued}; retry later`,
      );
    }
    queuedTokens += tokens;
    let released = false;
    return () => {
      if (!released) queuedTokens -= tokens;
      released = true;
    };
  }

  /** Runs every (prompt, sample) of a request; a client that disconnects aborts them. */
  async function runAll(
    res: ServerResponse,
    prompts: number[][],
    n: number,
    sampling: SamplingParams,
  ): Promise<GenerateResult[]> {
    const release = admit(prompts, n, sampling.maxTokens);
    const controller = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) controller.abort();
    };
    res.on('close', onClose);
    try {
      const runs = prompts.flatMap((p) =>
        Array.from({ length: n }, () => generator.generate(p, sampling, { signal: controller.signal })),
      );
      const settled = await Promise.allSettled(runs);
      const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) {
        controller.abort();
        const e = failed.reason;
        throw e instanceof UserError ? new HttpError(400, e.message) : e;
      }
      return settled.map((s) => (s as PromiseFulfilledResult<GenerateResult>).value);
    } finally {
      release();
      res.off('close', onClose);
    }
  }

  async function readJson(req: IncomingMessage): Promise<unknown> {
    const raw = await readBody(req, limit);
    try {
      return JSON.parse(raw);
    } catch (e) {
      throw new HttpError(400, `the request body is not valid JSON: ${(e as Error).message}`);
    }
  }

  async function generateNative(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const job = parseGenerateRequest(await readJson(req));
    const results = await runAll(res, job.prompts, 1, job.sampling);
    const answers = results.map((r, i) => ({
      text: o.tokenizer ? o.tokenizer.decode(r.tokenIds) : '',
      output_ids: r.tokenIds,
      meta_info: {
        id: randomUUID().replace(/-/g, ''),
        finish_reason: { type: r.finishReason },
        prompt_tokens: job.prompts[i].length,
        completion_tokens: r.tokenIds.length,
        weight_version: weightVersion,
        ...(job.returnLogprob
          ? { output_token_logprobs: r.tokenIds.map((id, k) => [r.logprobs?.[k] ?? null, id, null]) }
          : {}),
      },
    }));
    send(res, 200, job.batched ? answers : answers[0]);
  }

  /** Loads the weights in `path` for either API's update route; resolves to the reason when they do not load. */
  async function loadWeights(path: string): Promise<string | undefined> {
    if (!o.updateWeights) throw new HttpError(400, 'this server was started without a way to load weights');
    try {
      await o.updateWeights(path);
      return undefined;
    } catch (e) {
      return (e as Error).message;
    }
  }

  async function updateWeightsFromDisk(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = (await readJson(req)) as Record<string, unknown> | null;
    const path = body?.model_path;
    if (typeof path !== 'string' || path === '')
      throw new HttpError(400, "'model_path' is required: the folder to load the weights from", 'model_path');
    const failed = await loadWeights(path);
    if (failed !== undefined) {
      send(res, 400, { success: false, message: failed });
      return;
    }
    const version = body?.weight_version;
    if (typeof version === 'string' || typeof version === 'number') weightVersion = String(version);
    send(res, 200, { success: true, message: `loaded the weights in ${path}`, weight_version: weightVersion });
  }

  /** vLLM's dev-mode POST /collective_rpc, for the one method a trainer calls: reload_weights(weights_path). */
  async function collectiveRpc(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = (await readJson(req)) as Record<string, unknown> | null;
    if (body?.method !== 'reload_weights')
      throw new HttpError(
        400,
        `'method' ${JSON.stringify(body?.method)} is not run by this server; it runs only 'reload_weights'`,
        'method',
      );
    const kwargs = (body.kwargs ?? {}) as Record<string, unknown>;
    const path = kwargs.weights_path;
    if (typeof path !== 'string' || path === '')
      throw new HttpError(400, "'kwargs.weights_path' is required: the folder to load the weights from", 'kwargs');
    const failed = await loadWeights(path);
    if (failed !== undefined) throw new HttpError(400, `reload_weights(${path}) failed: ${failed}`);
    // one result per worker, as vLLM answers; reload_weights returns nothing
    send(res, 200, { results: [null] });
  }

  const tokenText = (id: number, asIds: boolean): string =>
    asIds || !o.tokenizer ? `token_id:${id}` : o.tokenizer.decode([id]);

  function choice(index: number, prompt: number[], r: GenerateResult, job: CompletionJob) {
    const ids = r.tokenIds;
    const last = ids[ids.length - 1];
    const stopReason = r.finishReason === 'stop' && job.sampling.stopTokenIds?.includes(last) ? last : null;
    let logprobs = null;
    if (job.logprobs !== null) {
      const tokens = ids.map((id) => tokenText(id, job.tokensAsIds));
      const offsets: number[] = [];
      let at = 0;
      for (const t of tokens) {
        offsets.push(at);
        at += o.tokenizer && !job.tokensAsIds ? t.length : 0;
      }
      const lps = r.logprobs ?? [];
      logprobs = {
        text_offset: offsets,
        token_logprobs: ids.map((_, i) => lps[i] ?? null),
        tokens,
        top_logprobs: ids.map((_, i) => (lps[i] === undefined ? null : { [tokens[i]]: lps[i] })),
      };
    }
    return {
      index,
      text: o.tokenizer ? o.tokenizer.decode(ids) : '',
      logprobs,
      finish_reason: r.finishReason,
      stop_reason: stopReason,
      ...(job.returnTokenIds ? { token_ids: ids, prompt_token_ids: prompt } : {}),
    };
  }

  async function completions(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const job = parseCompletionRequest(await readJson(req));
    if (job.model !== null && job.model !== modelName)
      throw new HttpError(404, `The model \`${job.model}\` does not exist; this server serves '${modelName}'`, 'model');
    const results = await runAll(res, job.prompts, job.n, job.sampling);
    const choices = results.map((r, i) => choice(i, job.prompts[Math.floor(i / job.n)], r, job));
    const promptTokens = job.prompts.reduce((a, p) => a + p.length, 0) * job.n;
    const completionTokens = results.reduce((a, r) => a + r.tokenIds.length, 0);
    send(res, 200, {
      id: `cmpl-${randomUUID().replace(/-/g, '')}`,
      object: 'text_completion',
      created: Math.floor(Date.now() / 1000),
      model: modelName,
      choices,
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      },
    });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0].replace(/\/+$/, '');
    try {
      if (path === '/v1/completions') {
        if (req.method !== 'POST') throw new HttpError(405, `${req.method} is not allowed on ${path}; use POST`);
        await completions(req, res);
      } else if (path === '/v1/models') {
        if (req.method !== 'GET') throw new HttpError(405, `${req.method} is not allowed on ${path}; use GET`);
        send(res, 200, {
          object: 'list',
          data: [
            {
              id: modelName,
              object: 'model',
              created,
              owned_by: 'agent-r1',
              root: modelName,
              parent: null,
              ...(o.maxModelLen ? { max_model_len: o.maxModelLen } : {}),
            },
          ],
        });
      } else if (path === '/generate') {
        if (req.method !== 'POST') throw new HttpError(405, `${req.method} is not allowed on ${path}; use POST`);
        await generateNative(req, res);
      } else if (path === '/update_weights_from_disk') {
        if (req.method !== 'POST') throw new HttpError(405, `${req.method} is not allowed on ${path}; use POST`);
        await updateWeightsFromDisk(req, res);
      } else if (path === '/collective_rpc') {
        if (req.method !== 'POST') throw new HttpError(405, `${req.method} is not allowed on ${path}; use POST`);
        await collectiveRpc(req, res);
      } else if (path === '/reset_prefix_cache') {
        if (req.method !== 'POST') throw new HttpError(405, `${req.method} is not allowed on ${path}; use POST`);
        // the engine shares prefixes only within one request, so nothing outlives a weight update
        res.writeHead(200).end();
      } else if (path === '/health') {
        send(res, 200, {});
      } else {
        throw new HttpError(
          404,
          `no route ${req.method} ${path}; this server has /v1/completions, /v1/models, /generate, /update_weights_from_disk, /collective_rpc, /reset_prefix_cache and /health`,
        );
      }
    } catch (e) {
      if (e instanceof HttpError) send(res, e.status, errorBody(e.status, e.message, e.param, e.type));
      else send(res, 500, errorBody(500, `${(e as Error)?.name ?? 'Error'}: ${(e as Error)?.message ?? String(e)}`));
    }
  }

  const server = createServer((req, res) => {
    void handle(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 8000, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}/v1`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((e) => (e ? reject(e) : resolve()));
        server.closeAllConnections();
      }),
  };
}
