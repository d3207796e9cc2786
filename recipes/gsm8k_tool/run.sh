#!/usr/bin/env bash
# Agent-R1's main workflow, GSM8K with the calc_gsm8k_reward tool (examples/run_qwen3-4b_gsm8k_tool.sh: GRPO, agent_env_loop, ToolEnv), on config.yaml.
#
#   bash recipes/gsm8k_tool/run.sh actor_rollout_ref.model.path=~/models/Qwen3-4B-Instruct-2507 trainer.total_epochs=1
#
# Arguments are key=value overrides; they come after config.yaml and win, as in Agent-R1's scripts.
# DATA_DIR (default ~/data/gsm8k_tool) gets train.parquet and test.parquet from GSM8K_SOURCE (default
# ../shared/data/gsm8k beside the checkout, {train,test}.jsonl) when they are missing.
# AGENT_R1_COMMAND=config prints the resolved config instead of training.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
DATA_DIR="${DATA_DIR:-$HOME/data/gsm8k_tool}"
GSM8K_SOURCE="${GSM8K_SOURCE:-$root/../shared/data/gsm8k}"

if [[ ! -f "$DATA_DIR/train.parquet" || ! -f "$DATA_DIR/test.parquet" ]]; then
  "$root/scripts/agent-r1" data gsm8k --tool --source "$GSM8K_SOURCE" --out "$DATA_DIR" >&2
fi
exec "$root/scripts/agent-r1" "${AGENT_R1_COMMAND:-train}" --config "$here/config.yaml" \
  data.train_files="$DATA_DIR/train.parquet" data.val_files="$DATA_DIR/test.parquet" "$@"
