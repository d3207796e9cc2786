#!/usr/bin/env bash
# GRPO on the calculator word problems (config.yaml: agent_env_loop, ToolEnv with the calculator, Hermes calls),
# from a warm-started model. `npm start` runs the whole thing (data, tokenizer, tiny model, SFT, this, report).
#
#   bash recipes/arithmetic_tool/run.sh actor_rollout_ref.model.path=<an SFT'd model folder> trainer.total_training_steps=30
#
# Arguments are key=value overrides; they come after config.yaml and win, as in Agent-R1's scripts.
# DATA_DIR (default ~/data/arithmetic_tool) gets train/test (RL rows) and sft_train/sft_val (traces for
# `agent-r1 sft --config recipes/arithmetic_tool/sft.yaml`) from the seeded generator when they are missing.
# AGENT_R1_COMMAND=config prints the resolved config instead of training.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
DATA_DIR="${DATA_DIR:-$HOME/data/arithmetic_tool}"

if [[ ! -f "$DATA_DIR/train.parquet" || ! -f "$DATA_DIR/test.parquet" ]]; then
  "$root/scripts/agent-r1" data arithmetic --out "$DATA_DIR" >&2
fi
exec "$root/scripts/agent-r1" "${AGENT_R1_COMMAND:-train}" --config "$here/config.yaml" \
  data.train_files="$DATA_DIR/train.parquet" data.val_files="$DATA_DIR/test.parquet" "$@"
