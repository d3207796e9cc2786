// What SFT trains on. A dataset row is a conversation (`messages`, verl's multi-turn SFT column)
// whose assistant entries hold the raw action text the model must generate; an agent row also
// carries its Agent-R1 RL row, so it is replayed through its own flow and env. Each assistant turn
// becomes one step row: the prompt ids as the flow renders that step, the action's ids + EOS.
import type { AgentSample, ChatMessage, ToolSchema } from '../agent/index.js';

export interface SftSample {
  /** The whole conversation; assistant `content` is the raw action text (e.g. `<tool_call>...</tool_call>` or `#### 7`). */
  messages: ChatMessage[];
  /** The RL row (`agent_name`, `prompt`, `env_kwargs`, ...) of an agent conversation; absent for plain chat. */
  agent?: AgentSample;
  /** Plain chat: tool schemas for the chat template (verl's `data.multiturn.tools_key`). */
  tools?: ToolSchema[];
  /** Plain chat: this row's `enable_thinking` (verl's `data.multiturn.enable_thinking_key`). */
  enableThinking?: boolean;
}

/** One training row: an assistant turn of a conversation. */
export interface SftStepRow {
  /** Index of the sample it came from. */
  sample: number;
  /** Which assistant turn (0-based). */
  step: number;
  promptIds: number[];
  /** The action's token ids and the EOS the engine stops on. */
  responseIds: number[];
}

/** A sample that gave no rows, and why. */
export interface SftRowProblem {
  index: number;
  message: string;
}
