// What the data-parallel tests share: worker processes started as c10d ranks (the torchrun
// environment), `agent-r1 train` on the gsm8k_tool recipe over a tiny Qwen3 and a few GSM8K rows
// (CPU, Gloo), a child's output, and the largest difference between two safetensors files.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as torch from '../../src/torch/index.js';
import { freePort } from '../../src/cli/launch.js';
import { gsm8kRowsFromFile, writeRows } from '../../src/data/index.js';
import { writeTinyQwen3 } from './tiny-qwen3.js';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Runs a TypeScript worker with `env` (one libtorch thread); resolves with its stdout, rejects with its stderr. */
export function runWorker(script: string, env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, OMP_NUM_THREADS: '1', ...env },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`worker exited ${code}: ${err}`)))),
  );
}

/** The last line a worker printed, as JSON. */
export const lastJsonLine = <T>(out: string): T => JSON.parse(out.trim().split('\n').at(-1)!) as T;

/** Runs `script` as ranks 0..worldSize-1 of one process group on 127.0.0.1 (`env(rank)` adds each one's variables). */
export async function runRanks(
  script: string,
  worldSize: number,
  env: (rank: number) => Record<string, string>,
): Promise<string[]> {
  const port = String(await freePort());
  return Promise.all(
    Array.from({ length: worldSize }, (_, r) =>
      runWorker(script, {
        ...env(r),
        RANK: String(r),
        WORLD_SIZE: String(worldSize),
        MASTER_ADDR: '127.0.0.1',
        MASTER_PORT: port,
      }),
    ),
  );
}

/**
 * Max |a - b| over the tensors of two safetensors files. They must hold the same names and shapes,
 * unless `subset`: then b may hold more (a critic's beside the actor's), and a's names are compared.
 */
export function maxSafetensorsDiff(a: string, b: string, o: { subset?: boolean } = {}): number {
  const x = torch.readSafetensors(a);
  const y = torch.readSafetensors(b);
  try {
    if (!o.subset) assert.deepEqual([...x.keys()].sort(), [...y.keys()].sort(), `${a} and ${b} hold the same tensors`);
    let d = 0;
    for (const [k, t] of x) {
      const u = y.get(k);
      assert.ok(u, `${b} holds ${k}`);
      assert.deepEqual(t.shape, u.shape, k);
      d = Math.max(
        d,
        torch.scope(() => t.sub(u).abs().max().item()),
      );
    }
    return d;
  } finally {
    for (const t of [...x.values(), ...y.values()]) t.dispose();
  }
}

/** A tiny Qwen3 (`hidden` wide) and the first `rows` GSM8K test rows in the tool format, written under `dir`. */
export function tinyToolTask(dir: string, o: { hidden: number; rows: number }): { model: string; train: string } {
  const model = writeTinyQwen3(join(dir, 'tiny'), { hidden: o.hidden });
  const rows = gsm8kRowsFromFile(fileURLToPath(new URL('../../../shared/data/gsm8k/test.jsonl', import.meta.url)), {
    split: 'test',
    tool: true,
  });
  const train = join(dir, 'train.jsonl');
  writeRows(train, rows.slice(0, o.rows), 'jsonl');
  return { model, train };
}

/**
 * `node` arguments of `agent-r1 train` on the gsm8k_tool recipe over `task`, on the CPU with 2 ranks,
 * no validation and no logger; `overrides` (key=value) come last and win.
 */
export function twoRankTrainArgs(task: { model: string; train: string }, overrides: string[]): string[] {
  return [
    '--import',
    'tsx',
    join(repoRoot, 'src', 'cli', 'main.ts'),
    'train',
    '--config',
    join(repoRoot, 'recipes', 'gsm8k_tool', 'config.yaml'),
    `data.train_files=${task.train}`,
    'data.val_files=[]',
    `actor_rollout_ref.model.path=${task.model}`,
    'actor_rollout_ref.rollout.prompt_length=1024',
    'trainer.test_freq=0',
    'trainer.val_before_train=false',
    'trainer.logger=[]',
    'trainer.device=cpu',
    'trainer.n_gpus_per_node=2',
    ...overrides,
  ];
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  seconds: number;
  /** stdout and stderr together. */
  out: string;
}

/** Starts `node args` (one libtorch thread; `detached`: in a process group of its own, to kill it whole). */
export function startNode(
  args: string[],
  o: { detached?: boolean } = {},
): { child: ChildProcess; exited: Promise<Exit> } {
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    env: { ...process.env, OMP_NUM_THREADS: '1' },
    detached: o.detached ?? false,
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<Exit>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, seconds: (performance.now() - started) / 1000, out })),
  );
  return { child, exited };
}
