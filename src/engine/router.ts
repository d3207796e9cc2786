// One Generator over several servers: requests are balanced across them, and requests with the
// same `routeKey` (one trajectory's steps) stick to one server so its prefix cache hits.
//
// A server that stays down (the client's retries are spent on network errors, timeouts or 5xx) is
// skipped: the request moves to the next live server and the skip is counted; the skipped server
// is tried again after `downForMs`. Only when every server is down does the request fail. A
// request the server refuses (4xx) fails at once: another server would refuse it too.
import { AgentR1Error, UserError } from '../errors.js';
import type { GenerateOptions, GenerateResult, Generator, SamplingParams } from './generator.js';
import { RemoteGeneratorError } from './http-client.js';

export interface RoutedServer {
  /** Shown in errors and metrics. */
  name: string;
  generator: Generator;
}

export interface RouterStats {
  /** Requests sent to each server (by name), including those that failed. */
  requests: Record<string, number>;
  /** Times a request moved on because its server was down. */
  skips: number;
  /** Servers out of the rotation (they missed the last weight update). */
  disabled: string[];
}

export class GeneratorRouter implements Generator {
  private readonly downUntil: number[];
  private readonly sticky = new Map<string, number>();
  private readonly inFlight: number[];
  private readonly counts: Record<string, number> = {};
  private skipCount = 0;
  private readonly disabled = new Set<number>();

  constructor(
    readonly servers: RoutedServer[],
    private readonly options: { downForMs?: number; maxStickyKeys?: number } = {},
  ) {
    if (servers.length === 0) throw new UserError('a generator router needs at least one server');
    this.downUntil = servers.map(() => 0);
    this.inFlight = servers.map(() => 0);
    for (const s of servers) this.counts[s.name] = 0;
  }

  get stats(): RouterStats {
    return {
      requests: { ...this.counts },
      skips: this.skipCount,
      disabled: [...this.disabled].map((i) => this.servers[i].name),
    };
  }

  /**
   * For the trainer's step metrics: skips so far, servers marked down now (a request to them failed
   * within `downForMs`) and servers out of the rotation (they missed the last weight update).
   */
  metrics(): Record<string, number> {
    const now = Date.now();
    return {
      'rollout/server_skips': this.skipCount,
      'rollout/servers_down': this.downUntil.filter((t) => t > now).length,
      'rollout/servers_disabled': this.disabled.size,
    };
  }

  /**
   * Takes server `index` out of the rotation (e.g. it missed a weight update) or puts it back; put
   * back, it has just answered, so it is no longer marked down either.
   */
  setEnabled(index: number, enabled: boolean): void {
    if (enabled) {
      this.disabled.delete(index);
      this.downUntil[index] = 0;
    } else this.disabled.add(index);
  }

  /** The server a request goes to: its key's server while that one is up, else the least busy live one. */
  private pick(key: string | undefined, exclude: Set<number>): number {
    const now = Date.now();
    // a candidate: not tried for this request and in the rotation; live: also not marked down
    const candidate = (i: number) => !exclude.has(i) && !this.disabled.has(i);
    const live = (i: number) => candidate(i) && this.downUntil[i] <= now;
    const stuck = key === undefined ? undefined : this.sticky.get(key);
    if (stuck !== undefined && live(stuck)) return stuck;
    let best = -1;
    for (let i = 0; i < this.servers.length; i++) {
      if (candidate(i) && (best < 0 || this.better(i, best, now))) best = i;
    }
    if (key !== undefined && best >= 0) {
      // bounded: old keys (finished trajectories) are dropped first
      if (this.sticky.size >= (this.options.maxStickyKeys ?? 100_000))
        this.sticky.delete(this.sticky.keys().next().value!);
      this.sticky.set(key, best);
    }
    return best;
  }

  private better(i: number, j: number, now: number): boolean {
    const upI = this.downUntil[i] <= now;
    const upJ = this.downUntil[j] <= now;
    if (upI !== upJ) return upI;
    return this.inFlight[i] < this.inFlight[j];
  }

  async generate(promptIds: readonly number[], sampling: SamplingParams, opts: GenerateOptions = {}) {
    const tried = new Set<number>();
    const failures: string[] = [];
    for (;;) {
      const i = this.pick(opts.routeKey, tried);
      if (i < 0) {
        throw new AgentR1Error(`every rollout server is down:\n  ${failures.join('\n  ')}`);
      }
      tried.add(i);
      const server = this.servers[i];
      this.counts[server.name]++;
      this.inFlight[i]++;
      try {
        const result: GenerateResult = await server.generator.generate(promptIds, sampling, opts);
        return result;
      } catch (e) {
        if (!(e instanceof RemoteGeneratorError) || !e.serverDown || opts.signal?.aborted) throw e;
        failures.push(`${server.name}: ${e.message}`);
        this.downUntil[i] = Date.now() + (this.options.downForMs ?? 30_000);
        this.skipCount++;
      } finally {
        this.inFlight[i]--;
      }
    }
  }
}
