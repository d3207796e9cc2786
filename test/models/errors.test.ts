// Bad model folders and configs: each gives a UserError that names the file, the tensor or
// the option, and lists what is supported; one error reports every bad tensor at once.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { UserError } from '../../src/errors.js';
import { createCausalLM, loadCausalLM, packSequences, tinyConfig, type HFConfig } from '../../src/models/index.js';

function throwsUser(fn: () => unknown, ...patterns: RegExp[]): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(UserError.isInstance(e), `expected a UserError, got ${String(e)}`);
    for (const p of patterns) assert.match((e as Error).message, p);
    return true;
  });
}

describe('bad model folders and configs', () => {
  const root = mkdtempSync(join(tmpdir(), 'agent-r1-bad-'));
  const good = join(root, 'good');
  let n = 0;
  /** A copy of the good folder to break. */
  const copy = (): string => {
    const dir = join(root, `case${n++}`);
    cpSync(good, dir, { recursive: true });
    return dir;
  };
  const editConfig = (dir: string, edit: (c: HFConfig) => void) => {
    const c = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    edit(c);
    writeFileSync(join(dir, 'config.json'), JSON.stringify(c));
  };
  const editWeights = (dir: string, edit: (m: Map<string, torch.Tensor>) => void) => {
    torch.scope(() => {
      const m = torch.readSafetensors(join(dir, 'model.safetensors'));
      edit(m);
      torch.writeSafetensors(join(dir, 'model.safetensors'), m, { format: 'pt' });
    });
  };

  before(() => {
    const m = createCausalLM(tinyConfig('qwen3'), { seed: 1 });
    m.save(good, { tokenizerFrom: null });
    m.dispose();
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('loads the good folder (the control)', () => {
    loadCausalLM(good).dispose();
  });

  it('missing config.json names the folder and the file', () => {
    const dir = copy();
    rmSync(join(dir, 'config.json'));
    throwsUser(() => loadCausalLM(dir), /no config\.json/, new RegExp(dir));
  });

  it('config.json that is not JSON', () => {
    const dir = copy();
    writeFileSync(join(dir, 'config.json'), '{ "model_type": "qwen3", ');
    throwsUser(() => loadCausalLM(dir), /config\.json is not valid JSON/);
  });

  it('missing weights name the files looked for and what is there', () => {
    const dir = copy();
    renameSync(join(dir, 'model.safetensors'), join(dir, 'pytorch_model.bin'));
    throwsUser(
      () => loadCausalLM(dir),
      /model\.safetensors or model\.safetensors\.index\.json/,
      /pytorch_model.*not read/,
    );
  });

  it('an index that names a missing shard names the shard', () => {
    const dir = copy();
    writeFileSync(
      join(dir, 'model.safetensors.index.json'),
      JSON.stringify({
        metadata: {},
        weight_map: { 'model.norm.weight': 'model-00002-of-00002.safetensors' },
      }),
    );
    throwsUser(() => loadCausalLM(dir), /model-00002-of-00002\.safetensors/);
  });

  it('unsupported architectures list the supported ones', () => {
    for (const [arch, type] of [
      ['MistralForCausalLM', 'mistral'],
      ['Qwen3MoeForCausalLM', 'qwen3_moe'],
      ['Qwen3ForCausalLM', 'llama'],
    ]) {
      const dir = copy();
      editConfig(dir, (c) => {
        c.architectures = [arch];
        c.model_type = type;
      });
      throwsUser(
        () => loadCausalLM(dir),
        new RegExp(`unsupported architecture "${arch}"`),
        /Qwen2ForCausalLM \(model_type 'qwen2'\)/,
        /Qwen3ForCausalLM \(model_type 'qwen3'\)/,
        /LlamaForCausalLM \(model_type 'llama'\)/,
      );
    }
  });

  it('unsupported options: sliding window, other rope types, MoE, activations, partial rotary', () => {
    const cases: [Partial<HFConfig>, RegExp][] = [
      [{ use_sliding_window: true, sliding_window: 4096 }, /sliding-window attention .* not supported/],
      [{ layer_types: ['full_attention', 'sliding_attention'] }, /sliding-window/],
      [
        { rope_scaling: { rope_type: 'yarn', factor: 4 } },
        /rope type 'yarn' is not supported; supported rope types: default, llama3/,
      ],
      [{ rope_parameters: { rope_type: 'dynamic', rope_theta: 1e6 } }, /rope type 'dynamic'/],
      [{ num_experts: 8 }, /mixture-of-experts/],
      [{ hidden_act: 'gelu' }, /hidden_act 'gelu' is not supported/],
      [{ partial_rotary_factor: 0.5 }, /partial_rotary_factor/],
      [{ num_key_value_heads: 3 }, /not a multiple of num_key_value_heads/],
      [{ hidden_size: 'big' as unknown as number }, /'hidden_size' must be a positive integer/],
    ];
    for (const [edit, pattern] of cases) {
      throwsUser(() => createCausalLM({ ...tinyConfig('qwen3'), ...edit }), pattern);
    }
  });

  it('wrong dtype: in config.json, in the options, and a tensor stored as integers', () => {
    const dir = copy();
    editConfig(dir, (c) => {
      c.dtype = 'int8';
    });
    throwsUser(
      () => loadCausalLM(dir),
      /dtype "int8" is not supported; use one of float32, bfloat16, float16, float64/,
    );
    throwsUser(() => loadCausalLM(good, { dtype: 'int16' }), /dtype "int16" is not supported/);
    const dir2 = copy();
    editWeights(dir2, (m) => m.set('model.norm.weight', m.get('model.norm.weight')!.to('int32')));
    throwsUser(() => loadCausalLM(dir2), /tensor 'model\.norm\.weight' .* has dtype int32/);
  });

  it('missing, unexpected and mis-shaped tensors are all named in one error', () => {
    const dir = copy();
    editWeights(dir, (m) => {
      m.delete('model.layers.1.mlp.up_proj.weight');
      m.set('model.layers.0.self_attn.extra.weight', torch.zeros([2]));
      m.set('model.layers.0.self_attn.q_norm.weight', torch.ones([7]));
    });
    throwsUser(
      () => loadCausalLM(dir),
      /missing tensor 'model\.layers\.1\.mlp\.up_proj\.weight' \(shape \[128, 64\]\)/,
      /unexpected tensor 'model\.layers\.0\.self_attn\.extra\.weight'/,
      /tensor 'model\.layers\.0\.self_attn\.q_norm\.weight' .* has shape \[7\], config\.json implies \[32\]/,
    );
  });

  it('a config that does not fit the weights names every mis-shaped tensor', () => {
    const dir = copy();
    editConfig(dir, (c) => {
      c.intermediate_size = 100;
    });
    throwsUser(
      () => loadCausalLM(dir),
      /model\.layers\.0\.mlp\.gate_proj\.weight.*\[128, 64\].*\[100, 64\]/,
      /model\.layers\.1\.mlp\.down_proj\.weight/,
    );
  });

  it('bad packed input: empty sequences, wrong targets, a disposed model', () => {
    throwsUser(() => packSequences([]), /at least one sequence/);
    throwsUser(() => packSequences([[1, 2], []]), /no empty sequence/);
    const m = loadCausalLM(good);
    torch.scope(() => {
      using b = packSequences([[1, 2, 3]]);
      throwsUser(() => m.logprobs(b, { targets: torch.tensor([1, 2]) }), /targets must be \[T=3\]/);
      m.dispose();
      throwsUser(() => m.logprobs(b), /disposed/);
    });
  });
});
