// agent-r1 engine: rollout generation over a paged KV cache with continuous batching, sampling with
// logprobs, an OpenAI-compatible HTTP server over any Generator, and a client for such servers.
export { KVCache, blockBytes, type KVCacheShape } from './kv-cache.js';
export { BlockPool } from './block-pool.js';
export {
  generationModel,
  prefill,
  decodeStep,
  decodeUsesFlash,
  logitsOf,
  type GenerationModel,
  type PrefillInputs,
  type DecodeInputs,
  type DecodeAttention,
} from './forward.js';
export {
  samplingTensors,
  scaleLogits,
  tokenLogprobs,
  greedyTokens,
  truncateSorted,
  sampleFromLogits,
  sampleTokens,
  counterUniform,
  seedKey,
  isGreedy,
  rowSettings,
  samplingFeatures,
  featuresKey,
  type RowSampling,
  type RowSettings,
  type SamplingFeatures,
  type SamplingTensors,
} from './sampling.js';
export { StepInputs, type DecodeRows } from './step-inputs.js';
export {
  Engine,
  EngineError,
  engineMetrics,
  eosFromModel,
  type EngineOptions,
  type EngineStats,
  type CacheInfo,
} from './engine.js';
export { WorkerEngine, type WorkerEngineOptions } from './worker-engine.js';
export {
  DECODE_TRUNK_MIN_LAYER_BYTES,
  decodeTrunkRows,
  decodeTrunkUnsupported,
  fusedDecodeHidden,
  fusedDecodeUnsupported,
} from './fused-decode.js';
export { DecodeGraphs, GraphCaptureError, graphBatchSizes, graphWidth } from './decode-graphs.js';
export {
  serve,
  parseCompletionRequest,
  parseGenerateRequest,
  type GenerateJob,
  errorBody,
  HttpError,
  type ServerOptions,
  type RunningServer,
  type CompletionJob,
} from './server.js';
export { RemoteGenerator, RemoteGeneratorError, tokenIdsOfChoice, type RemoteGeneratorOptions } from './remote.js';
export { JsonHttpClient, type HttpClientOptions } from './http-client.js';
export { SglangGenerator, type SglangGeneratorOptions } from './sglang.js';
export { VllmGenerator } from './vllm.js';
export { GeneratorRouter, type RoutedServer, type RouterStats } from './router.js';
export type { GenerateOptions, GenerateResult, Generator, SamplingParams } from './generator.js';
