// Finds libtorch for the native build, in this order: $LIBTORCH; the `torch` package of
// python3 (a pip install carries libtorch's headers and libraries); a system install.
// Prints the folder (the one holding include/ and lib/). With --cuda prints 1 when that
// libtorch has CUDA (lib/libtorch_cuda.so), else 0. With --nccl prints the folder holding nccl.h
// (the CUDA build then includes c10d's ProcessGroupNCCL), or nothing. With --cuda-include prints the
// folder holding cuda_runtime.h, or nothing. Exits non-zero with a how-to message
// when nothing is found.
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function isLibtorch(dir) {
  return (
    !!dir &&
    existsSync(join(dir, 'include', 'torch', 'csrc', 'api', 'include', 'torch', 'torch.h')) &&
    (existsSync(join(dir, 'lib', 'libtorch.so')) || existsSync(join(dir, 'lib', 'libtorch.dylib')))
  );
}

const projectVenvPython = join(dirname(fileURLToPath(import.meta.url)), '..', '.venv', 'bin', 'python');

function fromPython() {
  // The project's own venv (scripts/setup.sh makes it) first, then python3 on PATH.
  for (const python of [process.env.PYTHON, projectVenvPython, 'python3', 'python'].filter(Boolean)) {
    try {
      const out = execFileSync(python, ['-c', 'import torch, os; print(os.path.dirname(torch.__file__))'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
      if (isLibtorch(out)) return out;
    } catch {
      /* this python has no torch */
    }
  }
  return undefined;
}

export function findLibtorch() {
  const tried = [];
  if (process.env.LIBTORCH) {
    if (isLibtorch(process.env.LIBTORCH)) return process.env.LIBTORCH;
    tried.push(
      `LIBTORCH=${process.env.LIBTORCH} (no include/torch/csrc/api/include/torch/torch.h or lib/libtorch.so there)`,
    );
  }
  const py = fromPython();
  if (py) return py;
  tried.push('the torch package of python3 (not installed, or without headers)');
  for (const dir of ['/usr/local/libtorch', '/opt/libtorch', '/usr/lib/libtorch', '/usr/local']) {
    if (isLibtorch(dir)) return dir;
  }
  tried.push('/usr/local/libtorch, /opt/libtorch, /usr/lib/libtorch, /usr/local');
  const message = [
    'agent-r1: libtorch not found. Tried:',
    ...tried.map((t) => `  - ${t}`),
    'Get one of:',
    '  - pip install torch==2.13.0   (CPU build; in the python3 on PATH, a venv is fine)',
    '  - export LIBTORCH=/path/to/libtorch   (an unpacked libtorch, or site-packages/torch)',
  ].join('\n');
  const error = new Error(message);
  error.code = 'LIBTORCH_NOT_FOUND';
  throw error;
}

/** The include folder with nccl.h for a CUDA libtorch: its own, pip's nvidia-nccl package beside it, or the system's. */
export function findNcclInclude(dir) {
  if (!existsSync(join(dir, 'lib', 'libtorch_cuda.so'))) return undefined;
  const candidates = [
    join(dir, 'include'),
    join(dir, '..', 'nvidia', 'nccl', 'include'),
    ...(process.env.NCCL_HOME ? [join(process.env.NCCL_HOME, 'include')] : []),
    ...(process.env.CUDA_HOME ? [join(process.env.CUDA_HOME, 'include')] : []),
    '/usr/include',
    '/usr/local/cuda/include',
  ];
  return candidates.find((c) => existsSync(join(c, 'nccl.h')));
}

/** The include folder with cuda_runtime.h and cuda.h for a CUDA libtorch (its c10/cuda headers include them): CUDA_HOME's, pip's nvidia packages beside torch, or the system's. */
export function findCudaInclude(dir) {
  if (!existsSync(join(dir, 'lib', 'libtorch_cuda.so'))) return undefined;
  const candidates = [
    ...(process.env.CUDA_HOME ? [join(process.env.CUDA_HOME, 'include')] : []),
    join(dir, '..', 'nvidia', 'cu13', 'include'),
    join(dir, '..', 'nvidia', 'cuda_runtime', 'include'),
    '/usr/local/cuda/include',
    '/usr/include',
  ];
  return candidates.find((c) => existsSync(join(c, 'cuda_runtime.h')));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    const dir = findLibtorch();
    if (process.argv.includes('--cuda-include')) {
      process.stdout.write(findCudaInclude(dir) ?? '');
    } else if (process.argv.includes('--nccl')) {
      process.stdout.write(findNcclInclude(dir) ?? '');
    } else if (process.argv.includes('--cuda')) {
      process.stdout.write(existsSync(join(dir, 'lib', 'libtorch_cuda.so')) ? '1' : '0');
    } else {
      process.stdout.write(dir);
    }
  } catch (e) {
    process.stderr.write(`${e.message}\n`);
    process.exit(1);
  }
}
