// The rollout runner: groups, flows by agent_name, env_kwargs merging, reward filling, failures that
// stay local to their trajectory, trajectory dumps, and user-written envs with text / token-id observations.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  AgentEnv,
  runRollout,
  type Action,
  type AgentSample,
  type EnvStepResult,
  type Observation,
  type RolloutOptions,
  type ToolCallRecord,
  agentEnvs,
} from '../../src/agent/index.js';
import { ScriptedPolicy } from '../../src/testing/index.js';
import type { Tokenizer } from '../../src/models/tokenizer/index.js';
import { hermesCall, qwen3Tokenizer, reply, toolSample, userPrompt } from './helpers.js';

let tok: Tokenizer;
before(async () => {
  tok = await qwen3Tokenizer();
});

function options(generator: ScriptedPolicy, extra: Partial<RolloutOptions> = {}): RolloutOptions {
  return {
    generator,
    tokenizer: tok,
    sampling: { maxTokens: 128 },
    config: { promptLength: 2048, responseLength: 128 },
    ...extra,
  };
}

/** A policy that calls calc_gsm8k_reward with `answer`, then answers `#### answer`. */
function gsmPolicy(answer = '72') {
  return new ScriptedPolicy((prompt) =>
    tok.decode(prompt).includes('<tool_response>')
      ? reply(tok, `#### ${answer}`)
      : reply(tok, hermesCall('calc_gsm8k_reward', { answer })),
  );
}

describe('runRollout', () => {
  it('runs each sample n times; the n rollouts share a group uid, each trajectory has its own uid', async () => {
    const samples = [
      toolSample('q1', { tools: ['calc_gsm8k_reward'] }),
      toolSample('q2', { tools: ['calc_gsm8k_reward'] }),
    ];
    for (const s of samples) s.extra_info = { index: 0, tools_kwargs: { ground_truth: '72' } };
    const batch = await runRollout(samples, options(gsmPolicy(), { n: 3, concurrency: 4 }));
    assert.equal(batch.trajectories.length, 6);
    assert.equal(batch.steps.length, 12);
    const groups = new Set(batch.trajectories.map((t) => t.groupUid));
    assert.equal(groups.size, 2);
    assert.equal(new Set(batch.trajectories.map((t) => t.trajectoryUid)).size, 6);
    for (const t of batch.trajectories) {
      const sameSample = batch.trajectories.filter((u) => u.sampleIndex === t.sampleIndex);
      assert.ok(sameSample.every((u) => u.groupUid === t.groupUid));
      const steps = batch.steps.filter((s) => s.trajectoryUid === t.trajectoryUid);
      assert.deepEqual(
        steps.map((s) => s.stepIndex),
        [0, 1],
      );
      assert.ok(steps.every((s) => s.groupUid === t.groupUid));
      assert.deepEqual(
        steps.map((s) => s.rewardScore),
        [0, 1],
      );
    }
    assert.equal(batch.metrics['rollout/num_trajectories'], 6);
    assert.equal(batch.metrics['rollout/end_reason/done'], 6);
    assert.equal(batch.metrics['rollout/reward_mean'], 0.5);
  });

  it('uses single_step_agent for rows without agent_name, scoring the response with the reward function', async () => {
    const policy = new ScriptedPolicy([reply(tok, 'So #### 72')]);
    const sample: AgentSample = {
      data_source: 'gsm8k',
      prompt: userPrompt('How many?'),
      reward_model: { ground_truth: '72' },
    };
    const batch = await runRollout([sample], options(policy));
    assert.equal(batch.steps.length, 1);
    assert.deepEqual(batch.steps[0].promptIds, tok.encodeChat(sample.prompt, { addGenerationPrompt: true }));
    assert.equal(batch.steps[0].rewardScore, 1);
    assert.equal(batch.trajectories[0].agentName, 'single_step_agent');
  });

  it('takes the default flow from the options when set (actor_rollout_ref.rollout.agent.default_agent_flow)', async () => {
    const sample = toolSample('q', { tools: ['calc_gsm8k_reward'], tools_kwargs: { ground_truth: '72' } });
    delete sample.agent_name;
    const batch = await runRollout([sample], options(gsmPolicy(), { defaultAgentFlow: 'agent_env_loop' }));
    assert.equal(batch.trajectories[0].agentName, 'agent_env_loop');
    assert.equal(batch.steps.length, 2);
  });

  it('merges env_kwargs: config defaults, then the sample (a JSON string, as Agent-R1 writes it), the sample wins', async () => {
    const sample = toolSample('q', {});
    sample.env_kwargs = JSON.stringify({ tools_kwargs: { ground_truth: '72' } });
    const config = {
      promptLength: 2048,
      responseLength: 128,
      envKwargs: { env_type: 'tool', tools: ['calc_gsm8k_reward'], tools_kwargs: { ground_truth: '1' } },
    };
    const batch = await runRollout([sample], options(gsmPolicy('72'), { config }));
    // The tool saw the sample's ground truth (72), not the config's (1).
    assert.equal((batch.steps[0].extra.info as { tool_calls: ToolCallRecord[] }).tool_calls[0].info?.reward, 1);
  });

  it('keeps the batch going when one trajectory fails, and records the error', async () => {
    const policy = new ScriptedPolicy((prompt) => {
      if (tok.decode(prompt).includes('poison')) throw new Error('engine lost the request');
      return reply(tok, '#### 72');
    });
    const dumpPath = join(mkdtempSync(join(tmpdir(), 'agent-r1-')), 'dumps', 'rollout.jsonl');
    const samples = [
      toolSample('fine one', { tools: ['calc_gsm8k_reward'] }),
      toolSample('poison', { tools: ['calc_gsm8k_reward'] }),
      { ...toolSample('bad env kwargs', {}), env_kwargs: { tools: ['calc_gsm8k_reward'] } },
      { ...toolSample('unscorable', { tools: ['calc_gsm8k_reward'] }), data_source: 'my/dataset' },
      toolSample('fine two', { tools: ['calc_gsm8k_reward'] }),
    ];
    const batch = await runRollout(samples, options(policy, { dumpPath }));
    assert.deepEqual(
      batch.trajectories.map((t) => t.error ?? 'ok'),
      [
        'ok',
        'Error: engine lost the request',
        "UserError: env_kwargs has no env_type (registered: alfworld, tool, webshop); set it in the sample's env_kwargs or in the agent_env_loop defaults",
        "NotRegisteredError: unknown reward function (data_source) 'my/dataset'; registered: arithmetic_tool, gsm8k, hotpotqa, openai/gsm8k, paper_search, webshop",
        'ok',
      ],
    );
    assert.equal(batch.metrics['rollout/num_failed'], 3);
    assert.deepEqual(
      batch.steps.map((s) => s.sampleIndex),
      [0, 4],
    );

    // One line per trajectory, in batch order, in Agent-R1's layout.
    const lines = readFileSync(dumpPath, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => l.sample_index),
      [0, 1, 2, 3, 4],
    );
    const first = lines[0];
    assert.equal(first.num_steps, 1);
    assert.equal(first.step, 0);
    assert.equal(first.output, '#### 72');
    assert.equal(first.score, 1);
    assert.equal(first.gts, '72');
    assert.equal(first.end_reason, 'done');
    const [step] = first.steps;
    assert.equal(step.step_index, 0);
    assert.ok(step.input.includes('fine one'));
    assert.equal(step.output, '#### 72');
    assert.deepEqual(step.response_ids, batch.steps[0].responseIds);
    assert.equal(step.score, 1);
    assert.equal(step.pred, '72');
    assert.equal(step.reward_source, 'reward_function');
    assert.equal(step.finish_reason, 'stop');
    assert.deepEqual(step.tool_calls, []);
    assert.equal(typeof step.timing.generate_s, 'number');
    assert.equal(lines[1].error, 'Error: engine lost the request');
    assert.equal(lines[1].score, null);
    // a reward function that failed: the trajectory keeps the steps it had, unscored
    assert.match(lines[3].error, /^NotRegisteredError: unknown reward function/);
    assert.equal(lines[3].num_steps, 1);
  });

  it('dumps a multi-step trajectory as one line: its steps with their index, tool calls and scores, at the given global step', async () => {
    const dumpPath = join(mkdtempSync(join(tmpdir(), 'agent-r1-')), '7.jsonl');
    await runRollout(
      [toolSample('q', { tools: ['calc_gsm8k_reward'], tools_kwargs: { ground_truth: '72' } })],
      options(gsmPolicy(), { dumpPath, dumpStep: 7 }),
    );
    const lines = readFileSync(dumpPath, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(lines.length, 1);
    const [t] = lines;
    assert.deepEqual([t.step, t.num_steps, t.score, t.output], [7, 2, 1, '#### 72']);
    // deferDump: nothing is written until the batch's writeDump(), which writes the same lines
    const later = join(dirname(dumpPath), 'later', '7.jsonl');
    const batch = await runRollout(
      [toolSample('q', { tools: ['calc_gsm8k_reward'], tools_kwargs: { ground_truth: '72' } })],
      options(gsmPolicy(), { dumpPath: later, dumpStep: 7, deferDump: true }),
    );
    assert.equal(existsSync(later), false, 'not written before writeDump()');
    batch.writeDump!();
    const again = JSON.parse(readFileSync(later, 'utf8').trim());
    assert.deepEqual(
      [again.step, again.num_steps, again.score, again.output, again.steps.length],
      [t.step, t.num_steps, t.score, t.output, t.steps.length],
    );
    assert.equal(t.input, t.steps[0].input);
    assert.deepEqual(
      t.steps.map((s: { step_index: number; score: number }) => [s.step_index, s.score]),
      [
        [0, 0],
        [1, 1],
      ],
    );
    assert.deepEqual(
      t.steps[0].tool_calls.map((c: Record<string, unknown>) => [
        c.name,
        c.arguments,
        c.text,
        c.reward,
        (c.info as { reward: number }).reward,
      ]),
      [['calc_gsm8k_reward', { answer: '72' }, "Current parsed answer='#### 72' reward=1.0", undefined, 1]],
    );
    assert.equal(t.end_reason, 'done');
  });

  it('throws the error itself when every trajectory fails (a setup mistake, not bad luck)', async () => {
    const policy = new ScriptedPolicy(() => reply(tok, 'x'));
    await assert.rejects(
      runRollout(
        [toolSample('q', {}), toolSample('r', {})].map((s) => ({ ...s, env_kwargs: { env_type: 'sandbox' } })),
        options(policy),
      ),
      {
        name: 'NotRegisteredError',
        message: /^unknown env 'sandbox'; registered: alfworld, tool, webshop$/,
      },
    );
  });

  it('rejects an unknown agent_name before generating anything', async () => {
    const policy = new ScriptedPolicy(() => reply(tok, 'x'));
    await assert.rejects(runRollout([{ ...toolSample('q', {}), agent_name: 'react_agent' }], options(policy)), {
      name: 'NotRegisteredError',
      message: "unknown agent flow 'react_agent'; registered: agent_env_loop, single_step_agent",
    });
    assert.equal(policy.calls.length, 0);
  });

  it('reports env_kwargs that are not JSON', async () => {
    const policy = new ScriptedPolicy(() => reply(tok, 'x'));
    await assert.rejects(runRollout([{ ...toolSample('q', {}), env_kwargs: '{env_type: tool}' }], options(policy)), {
      name: 'UserError',
      message: /^the sample's env_kwargs is a string but not valid JSON: /,
    });
  });
});

/** A user-written env: counts down, showing text at even steps and token ids at odd ones; anchors are the count. */
class CountdownEnv extends AgentEnv {
  private left = 0;
  constructor(private readonly kwargs: Record<string, unknown>) {
    super();
  }
  private observe(): Observation {
    const text = `Count: ${this.left}`;
    return this.left % 2 === 0 ? { text, anchor: this.left } : { tokenIds: [1, 2, 3, this.left], anchor: this.left };
  }
  reset(): Observation {
    this.left = this.kwargs.start as number;
    return this.observe();
  }
  async step(action: Action): Promise<EnvStepResult> {
    this.left -= 1;
    return {
      observation: this.observe(),
      reward: action.text.includes('down') ? 0.5 : 0,
      done: this.left === 0,
      info: {},
    };
  }
}

describe('a user-written env', () => {
  it('tokenizes text observations, passes token ids through, and records anchors', async () => {
    agentEnvs.register('countdown', CountdownEnv);
    const policy = new ScriptedPolicy(() => reply(tok, 'down'));
    const sample: AgentSample = {
      data_source: 'countdown',
      agent_name: 'agent_env_loop',
      prompt: [],
      env_kwargs: { env_type: 'countdown', start: 4 },
    };
    const batch = await runRollout([sample], options(policy));
    assert.equal(batch.steps.length, 4);
    assert.deepEqual(
      batch.steps.map((s) => s.anchor),
      [4, 3, 2, 1],
    );
    assert.deepEqual(batch.steps[0].promptIds, tok.encode('Count: 4'));
    assert.deepEqual(batch.steps[1].promptIds, [1, 2, 3, 3]);
    assert.ok(batch.steps.every((s) => s.rewardScore === 0.5));
  });
});

describe('single_step_agent', () => {
  it('passes chat template options through (enable_thinking)', async () => {
    const policy = new ScriptedPolicy([reply(tok, '#### 1')]);
    const sample: AgentSample = { data_source: 'gsm8k', prompt: userPrompt('1?'), reward_model: { ground_truth: '1' } };
    const batch = await runRollout(
      [sample],
      options(policy, { config: { promptLength: 2048, responseLength: 128, chatTemplate: { enableThinking: false } } }),
    );
    assert.ok(tok.decode(batch.steps[0].promptIds).endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n'));
  });

  it('ends without steps when the prompt is longer than prompt_length', async () => {
    const policy = new ScriptedPolicy([reply(tok, '#### 1')]);
    const sample: AgentSample = {
      data_source: 'gsm8k',
      prompt: userPrompt('long '.repeat(100)),
      reward_model: { ground_truth: '1' },
    };
    const batch = await runRollout([sample], options(policy, { config: { promptLength: 50, responseLength: 128 } }));
    assert.equal(batch.steps.length, 0);
    assert.equal(batch.trajectories[0].endReason, 'prompt_too_long');
    assert.match(batch.trajectories[0].endDetail!, /^prompt of \d+ tokens is longer than prompt_length 50 at step 0$/);
    assert.equal(policy.calls.length, 0);
  });
});
