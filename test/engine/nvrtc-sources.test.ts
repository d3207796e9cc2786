// The addon's CUDA kernels compile with NVRTC, which the addon runs only on a GPU machine: here
// scripts/nvrtc_check.py compiles each NVRTC program of native/src with pip's NVRTC for CUDA 13 (sm_90,
// no GPU needed) under the define sets that reach its branches. Without this, a source NVRTC refuses
// (b59c907's trunk: a generic lambda that nvcc takes) is found only at a GPU machine's first launch.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runPython } from '../helpers/python.js';

const SCRIPTS = fileURLToPath(new URL('../../scripts/', import.meta.url));
const NATIVE = fileURLToPath(new URL('../../native/src/', import.meta.url));
const PRELUDE = `import json, sys\nsys.path.insert(0, ${JSON.stringify(SCRIPTS)})\nimport nvrtc_check as check\n`;

type Program = { name: string; sets: number; failures: { defines: Record<string, number>; log: string }[] };

test('every NVRTC program of the addon compiles for sm_90 under each define set (the row kernels at each gemv BATCH, the head kernel and the paged attention at head dims 64-256, the decode trunk at 1-4 rows, traced or not, by columns or rows, two shapes)', () => {
  const programs = runPython<Program[]>(`${PRELUDE}print(json.dumps(check.check_all()))`);
  assert.deepEqual(
    programs.map((p) => [p.name, p.sets]),
    [
      ['row kernels', 4],
      ['qk_norm_rope_cache', 3],
      ['paged_decode_attention', 12],
      ['decode_trunk', 32],
    ],
  );
  for (const p of programs)
    assert.deepEqual(
      p.failures.map((f) => f.defines),
      [],
      `${p.name} does not compile:\n${p.failures.map((f) => f.log).join('\n')}`,
    );
});

test('the check fails where NVRTC does: a generic lambda in device code, a template parameter that a -D macro replaces', () => {
  const probes = {
    generic:
      'extern "C" __global__ void k(float* y) { const auto f = [&](int i, const auto& g) { y[i] = g(); }; f(threadIdx.x, [] { return 1.f; }); }',
    plain:
      'extern "C" __global__ void k(float* y) { const auto f = [&](int i, float v) { y[i] = v; }; f(threadIdx.x, 1.f); }',
    template:
      'template <int BATCH> __device__ int twice() { return 2 * BATCH; }\nextern "C" __global__ void k(int* y) { *y = twice<3>(); }',
  };
  const logs = runPython<Record<string, string>>(
    `${PRELUDE}probes = json.load(sys.stdin)
nvrtc = check.nvrtc_library()
print(json.dumps({
    "generic": check.compile_program(nvrtc, "probe", probes["generic"], {}),
    "plain": check.compile_program(nvrtc, "probe", probes["plain"], {}),
    "template": check.compile_program(nvrtc, "probe", probes["template"], {}),
    "template, BATCH=8": check.compile_program(nvrtc, "probe", probes["template"], {"BATCH": 8}),
}))`,
    probes,
  );
  assert.match(logs.generic, /host functions are not allowed in JIT mode/);
  assert.equal(logs.plain, '');
  assert.equal(logs.template, '');
  assert.match(logs['template, BATCH=8'], /error: expected a "," or ">"/);
});

test('the check covers every NVRTC program: the addon compiles kernels at six call sites, which its programs mirror', () => {
  // a new nvrtc::kernel call (a new program, or a new source for one) belongs in programs() of scripts/nvrtc_check.py
  const sites = Object.fromEntries(
    readdirSync(NATIVE)
      .filter((f) => f.endsWith('.cc'))
      .map((f) => [f, readFileSync(join(NATIVE, f), 'utf8').split('nvrtc::kernel(').length - 1])
      .filter(([, n]) => n),
  );
  assert.deepEqual(
    sites,
    { 'decode_trunk.cc': 1, 'fused_decode.cc': 3, 'paged_attention.cc': 2 },
    'nvrtc::kernel calls changed: cover the new program in programs() of scripts/nvrtc_check.py, then update this count',
  );
});
