// JSON over HTTP with retries, shared by the clients of remote inference servers (remote.ts for
// OpenAI-compatible completions, sglang.ts for SGLang's native API).
//
// Failures are never silent: a call either resolves or rejects with a RemoteGeneratorError saying
// what happened on every attempt. Network errors, timeouts, 408, 429 and 5xx are retried with
// exponential backoff; other 4xx errors (a bad request will not get better) are not.
import { AgentR1Error } from '../errors.js';

export interface HttpClientOptions {
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Time for one attempt, in ms. Default 600 000 (10 minutes). */
  timeoutMs?: number;
  /** Attempts after the first. Default 3. */
  maxRetries?: number;
  /** Wait before the first retry, doubled for each next one. Default 500 ms. */
  retryDelayMs?: number;
}

/** A remote request failed (after its retries, or at once for a bad request). */
export class RemoteGeneratorError extends AgentR1Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** The server could not be reached or kept failing (network, timeout, 5xx), as opposed to refusing the request. */
  get serverDown(): boolean {
    return this.status === null || this.status >= 500;
  }
}

class RetryableError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

export class JsonHttpClient {
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly retryDelayMs: number;

  /** `root` is prefixed to every path, e.g. 'http://host:port/v1'. */
  constructor(
    readonly root: string,
    private readonly options: HttpClientOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 600_000;
    this.maxRetries = options.maxRetries ?? 3;
    this.retryDelayMs = options.retryDelayMs ?? 500;
  }

  /** One call with retries: `what` names it in errors (e.g. 'POST /v1/completions'). */
  call(method: 'GET' | 'POST', path: string, body: unknown, signal?: AbortSignal): Promise<unknown> {
    return this.withRetries(`${method} ${path}`, signal, (s) => this.once(method, path, body, s));
  }

  /** Runs `attempt` with this client's retries and timeout per attempt. */
  async withRetries<T>(
    what: string,
    signal: AbortSignal | undefined,
    attempt: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const failures: string[] = [];
    let last: unknown;
    for (let i = 0; i <= this.maxRetries; i++) {
      if (i > 0) await sleep(this.retryDelayMs * 2 ** (i - 1), signal);
      if (signal?.aborted) throw signal.reason;
      const timeout = AbortSignal.timeout(this.timeoutMs);
      const s = signal ? AbortSignal.any([signal, timeout]) : timeout;
      try {
        return await attempt(s);
      } catch (e) {
        if (signal?.aborted) throw e;
        last = e;
        if (e instanceof RemoteGeneratorError) {
          throw new RemoteGeneratorError(e.message, e.status, i + 1, { cause: e });
        }
        const why = timeout.aborted ? `timed out after ${this.timeoutMs} ms` : (e as Error).message;
        failures.push(`attempt ${i + 1}: ${why}`);
        if (!(e instanceof RetryableError) && !timeout.aborted && !(e instanceof TypeError)) {
          throw new RemoteGeneratorError(`${what} to ${this.root} failed: ${why}`, null, i + 1, { cause: e });
        }
      }
    }
    const status = last instanceof RetryableError ? last.status : null;
    throw new RemoteGeneratorError(
      `${what} to ${this.root} failed after ${this.maxRetries + 1} attempts (${failures.join('; ')})`,
      status,
      this.maxRetries + 1,
      { cause: last },
    );
  }

  /**
   * One HTTP exchange, no retries (call it inside `withRetries`): a retryable failure throws
   * RetryableError, a final one RemoteGeneratorError.
   */
  async once(method: 'GET' | 'POST', path: string, body: unknown, signal: AbortSignal): Promise<unknown> {
    const res = await fetch(`${this.root}${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = undefined;
    }
    if (res.ok) {
      if (json === undefined)
        throw new RetryableError(`HTTP ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`, res.status);
      return json;
    }
    // OpenAI's { error: { message } } or { error }, SGLang's { message }, FastAPI's { detail } (vLLM's admin routes)
    const err = json as { error?: { message?: string } | string; message?: string; detail?: unknown } | undefined;
    const message =
      typeof err?.error === 'object'
        ? err.error.message
        : typeof err?.error === 'string'
          ? err.error
          : (err?.message ?? (typeof err?.detail === 'string' ? err.detail : text.slice(0, 500)));
    const why = `HTTP ${res.status}: ${message}`;
    if (res.status === 408 || res.status === 429 || res.status >= 500) throw new RetryableError(why, res.status);
    throw new RemoteGeneratorError(`${method} ${this.root}${path} failed: ${why}`, res.status, 1);
  }
}
