import { AgentEnvLoop } from './agent-env-loop.js';
import { AgentEnv } from './env.js';
import { AgentFlowBase } from './flow.js';
import { gptOssFormat } from './formats/gpt-oss.js';
import { hermesFormat } from './formats/hermes.js';
import { registerRewardFunction } from './reward-function.js';
import { extractGsm8kSolution, gsm8kScore } from './rewards/gsm8k.js';
import { arithmeticAnswer, arithmeticAnswerScore } from './rewards/arithmetic.js';
import { SingleStepAgentFlow } from './single-step-flow.js';
import { BaseTool } from './tool.js';
import { registerToolFormat } from './tool-format.js';
import { ToolEnv } from './tool-env.js';
import { CalcGsm8kRewardTool } from './tools/calc-gsm8k-reward.js';
import { CalculatorTool } from './tools/calculator.js';

let registered = false;

/**
 * Registers everything the framework ships, under the names Agent-R1 uses. The one place where
 * built-ins are registered; `src/agent/index.ts` calls it once. Safe to call again.
 */
export function registerBuiltins(): void {
  if (registered) return;
  registered = true;
  AgentEnv.register('tool', ToolEnv);
  AgentFlowBase.register('single_step_agent', SingleStepAgentFlow);
  AgentFlowBase.register('agent_env_loop', AgentEnvLoop);
  registerToolFormat(hermesFormat);
  registerToolFormat(gptOssFormat);
  BaseTool.register('calc_gsm8k_reward', () => new CalcGsm8kRewardTool());
  BaseTool.register('calculator', () => new CalculatorTool());
  // verl's default_compute_score scores GSM8K with the strict `#### N` extraction; the extracted
  // answer goes along as `pred`, so validation's maj@N votes on answers.
  const gsm8k = ({ solutionStr, groundTruth }: { solutionStr: string; groundTruth: unknown }) => ({
    score: gsm8kScore(solutionStr, groundTruth, { method: 'strict' }),
    pred: extractGsm8kSolution(solutionStr, 'strict'),
  });
  registerRewardFunction('openai/gsm8k', gsm8k);
  registerRewardFunction('gsm8k', gsm8k);
  // The calculator word problems (src/data/arithmetic.ts): the final `#### N`, compared as a number.
  registerRewardFunction('arithmetic_tool', ({ solutionStr, groundTruth }) => ({
    score: arithmeticAnswerScore(solutionStr, groundTruth),
    pred: arithmeticAnswer(solutionStr),
  }));
}
