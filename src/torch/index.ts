// agent-r1/torch: tensors, autograd, optimizers and CUDA over libtorch.
export { Tensor, type Scalar, type TensorOrScalar } from './tensor.js';
export type { DType } from './dtype.js';
export { isFloating } from './dtype.js';
export type { Device } from './device.js';
export { TorchError, type TorchErrorKind } from './errors.js';
export { scope, scopeAsync, keep, liveTensors } from './scope.js';
export {
  tensor,
  zeros,
  ones,
  full,
  empty,
  arange,
  linspace,
  eye,
  randn,
  rand,
  randint,
  zerosLike,
  onesLike,
  fullLike,
  randnLike,
  fromBytes,
  toBytes,
  type TensorOptions,
} from './factory.js';
export {
  cat,
  stack,
  where,
  linear,
  embedding,
  scaledDotProductAttention,
  flashAttentionVarlen,
  rmsNorm,
  layerNorm,
  crossEntropy,
  mseLoss,
  dropout,
  logSigmoid,
  softmax,
  logSoftmax,
  type SdpaOptions,
  type FlashVarlenOptions,
} from './nn.js';
export { noGrad, enableGrad, noGradGuard, isGradEnabled, setGradEnabled, backward, grad } from './autograd.js';
export {
  Optimizer,
  AdamW,
  SGD,
  clipGradNorm,
  constantLr,
  warmupCosineLr,
  type AdamWOptions,
  type SGDOptions,
  type NamedParams,
} from './optim.js';
export {
  readSafetensors,
  readSafetensorsHeader,
  writeSafetensors,
  type SafetensorsEntry,
  type SafetensorsHeader,
} from './safetensors.js';
export {
  cuda,
  manualSeed,
  setNumThreads,
  getNumThreads,
  torchVersion,
  type CudaMemoryStats,
} from './device-runtime.js';
export { aten, atenSchema } from './op.js';
export { CUDAGraph, graphPoolHandle, type GraphPool } from './cuda-graph.js';
export { hasPagedDecodeAttention, pagedDecodeAttention, preparePagedDecodeAttention } from './paged-attention.js';
export {
  addRmsNorm,
  addRmsNormGemvRows,
  copyPinned,
  dependentLaunches,
  GEMV_MAX_ROWS,
  gemvRows,
  hasFusedDecodeKernels,
  prepareFusedDecodeKernels,
  prepareSampleRows,
  sampleRows,
  qkNormRopeCache,
  setDependentLaunches,
  siluMul,
} from './fused-decode.js';
export {
  decodeTrunk,
  decodeTrunkTrace,
  decodeTrunkUnsupported,
  type DecodeTrunkLayer,
  type DecodeTrunkShape,
} from './decode-trunk.js';
export { shareTensor, adoptTensor, releaseShared } from './threads.js';
export { profile, startProfiler, stopProfiler, type ProfileEvent } from './profiler.js';
export {
  ProcessGroup,
  launchEnv,
  processGroupFromEnv,
  type Backend,
  type ReduceOp,
  type ProcessGroupOptions,
  type LaunchEnv,
} from './distributed.js';
