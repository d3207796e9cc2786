// `agent-r1 train trainer.n_gpus_per_node=N`: starts N ranks of this same command on this machine
// with the torchrun variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT), as torchrun would, and waits for them. Rank 0 prints as a single process does; the
// other ranks' output is dropped except their errors, prefixed with the rank. A rank that fails
// stops the run: the others are terminated (SIGTERM, then SIGKILL for one that does not go: a rank
// blocked in a collective runs no handler) and the error names the rank, its exit code or signal,
// and its last words. A rank whose launcher is gone (killed itself) stops too (watchLauncher).
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { AgentR1Error } from '../errors.js';

/** How long a rank told to stop (SIGTERM) has before it is killed (SIGKILL). */
const STOP_GRACE_MS = 3000;
/** The launcher's pid, in the environment of the ranks it starts. */
const LAUNCHER_PID = 'AGENT_R1_LAUNCHER_PID';

/** A TCP port free on 127.0.0.1 now (the OS picks it), for a rendezvous or a test server. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

export async function launchLocalRanks(worldSize: number, argv: readonly string[] = process.argv): Promise<void> {
  const port = await freePort();
  const children: ChildProcess[] = [];
  const tails: string[][] = [];
  const exits = Array.from({ length: worldSize }, (_, rank) => {
    const child = spawn(process.execPath, [...process.execArgv, ...argv.slice(1)], {
      env: {
        ...process.env,
        RANK: String(rank),
        WORLD_SIZE: String(worldSize),
        LOCAL_RANK: String(rank),
        LOCAL_WORLD_SIZE: String(worldSize),
        MASTER_ADDR: '127.0.0.1',
        MASTER_PORT: String(port),
        [LAUNCHER_PID]: String(process.pid),
      },
      stdio: rank === 0 ? 'inherit' : ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    const tail: string[] = [];
    tails.push(tail);
    child.stderr?.on('data', (d: Buffer) => {
      for (const line of d.toString().split('\n').filter(Boolean)) {
        process.stderr.write(`[rank ${rank}] ${line}\n`);
        tail.push(line);
        if (tail.length > 5) tail.shift();
      }
    });
    return new Promise<{ rank: number; code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ rank, code, signal })),
    );
  });
  const running = () => children.filter((c) => c.exitCode === null && c.signalCode === null);
  const stopAll = () => {
    for (const c of running()) c.kill('SIGTERM');
    setTimeout(() => {
      for (const c of running()) c.kill('SIGKILL');
    }, STOP_GRACE_MS).unref();
  };
  process.once('SIGINT', stopAll);
  process.once('SIGTERM', stopAll);
  // the first rank to fail stops the others (they would wait for it until the collective timeout)
  const failure = await Promise.race([
    ...exits.map((e) => e.then((r) => (r.code === 0 ? new Promise<never>(() => {}) : r))),
    Promise.all(exits).then(() => undefined),
  ]);
  if (failure) {
    // the ranks still running then: when the failure is a collective's timeout, the one that hung is among them
    const left = running().map((c) => children.indexOf(c));
    stopAll();
    await Promise.all(exits);
    const how = failure.signal ? `was killed by ${failure.signal}` : `exited with code ${failure.code}`;
    const still = left.length ? ` (still running then: rank${left.length > 1 ? 's' : ''} ${left.join(', ')})` : '';
    const words = tails[failure.rank].length ? `:\n  ${tails[failure.rank].join('\n  ')}` : '';
    throw new AgentR1Error(`rank ${failure.rank} of ${worldSize} ${how}; the other ranks were stopped${still}${words}`);
  }
}

/**
 * In a rank started by `launchLocalRanks`: exits (code 1, saying why) once the launcher is gone, so
 * a launcher killed by a signal it cannot catch (SIGKILL) leaves no rank behind holding the devices.
 * Checked four times a second while the event loop turns; a rank blocked in a collective is freed by
 * the collective's timeout or its peers' exit instead.
 */
export function watchLauncher(env: NodeJS.ProcessEnv = process.env): void {
  const launcher = Number(env[LAUNCHER_PID]);
  if (!Number.isInteger(launcher) || launcher <= 0) return;
  setInterval(() => {
    if (process.ppid === launcher) return;
    process.stderr.write(`rank ${env.RANK}: the launcher (pid ${launcher}) is gone; stopping\n`);
    process.exit(1);
  }, 250).unref();
}
