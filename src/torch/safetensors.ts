// The safetensors format, read and written in TypeScript: an 8-byte little-endian
// header length, a JSON header {name: {dtype, shape, data_offsets}, __metadata__},
// then the raw little-endian bytes of every tensor.
import { closeSync, openSync, readSync, writeSync, fstatSync } from 'node:fs';
import { UserError } from '../errors.js';
import type { DType } from './dtype.js';
import { itemSize } from './dtype.js';
import type { Device } from './device.js';
import type { Tensor } from './tensor.js';
import { fromBytes, toBytes } from './factory.js';

const toFormat: Partial<Record<DType, string>> = {
  float32: 'F32',
  float16: 'F16',
  bfloat16: 'BF16',
  float64: 'F64',
  int64: 'I64',
  int32: 'I32',
  int16: 'I16',
  int8: 'I8',
  uint8: 'U8',
  bool: 'BOOL',
};
const fromFormat = new Map(Object.entries(toFormat).map(([k, v]) => [v!, k as DType]));

export interface SafetensorsEntry {
  dtype: DType;
  shape: number[];
  begin: number;
  end: number;
}
export interface SafetensorsHeader {
  tensors: Map<string, SafetensorsEntry>;
  metadata: Record<string, string>;
  /** Byte offset of the data section in the file. */
  dataStart: number;
}

export function readSafetensorsHeader(path: string): SafetensorsHeader {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw new UserError(`cannot open safetensors file ${path}: ${(e as Error).message}`);
  }
  try {
    const size = fstatSync(fd).size;
    const lenBuf = Buffer.alloc(8);
    if (readSync(fd, lenBuf, 0, 8, 0) !== 8)
      throw new UserError(`${path}: not a safetensors file (shorter than 8 bytes)`);
    const headerLen = Number(lenBuf.readBigUInt64LE(0));
    if (headerLen <= 0 || 8 + headerLen > size) {
      throw new UserError(
        `${path}: not a safetensors file (header length ${headerLen} does not fit the ${size}-byte file)`,
      );
    }
    const headerBuf = Buffer.alloc(headerLen);
    readSync(fd, headerBuf, 0, headerLen, 8);
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(headerBuf.toString('utf8'));
    } catch (e) {
      throw new UserError(`${path}: safetensors header is not valid JSON: ${(e as Error).message}`);
    }
    const tensors = new Map<string, SafetensorsEntry>();
    const dataStart = 8 + headerLen;
    for (const [name, raw] of Object.entries(json)) {
      if (name === '__metadata__') continue;
      const info = raw as { dtype: string; shape: number[]; data_offsets: [number, number] };
      const dtype = fromFormat.get(info.dtype);
      if (!dtype)
        throw new UserError(`${path}: tensor '${name}' has dtype ${info.dtype}, which agent-r1 does not read`);
      const [begin, end] = info.data_offsets;
      const need = info.shape.reduce((a, b) => a * b, 1) * itemSize[dtype];
      if (end - begin !== need || dataStart + end > size) {
        throw new UserError(
          `${path}: tensor '${name}' (${info.dtype} [${info.shape}]) has data_offsets [${begin}, ${end}] that do not match its size or the file`,
        );
      }
      tensors.set(name, { dtype, shape: info.shape, begin, end });
    }
    return { tensors, metadata: (json.__metadata__ as Record<string, string>) ?? {}, dataStart };
  } finally {
    closeSync(fd);
  }
}

export interface ReadOptions {
  /** Only these tensors (all by default). */
  names?: Iterable<string>;
  device?: Device;
  dtype?: DType;
}

/** Reads tensors straight from the file into tensors (on `device`, converted to `dtype` if given). */
export function readSafetensors(path: string, opts: ReadOptions = {}): Map<string, Tensor> {
  const header = readSafetensorsHeader(path);
  const wanted = opts.names ? [...opts.names] : [...header.tensors.keys()];
  const out = new Map<string, Tensor>();
  const fd = openSync(path, 'r');
  try {
    for (const name of wanted) {
      const entry = header.tensors.get(name);
      if (!entry) throw new UserError(`${path}: no tensor named '${name}'`);
      const bytes = new Uint8Array(entry.end - entry.begin);
      let done = 0;
      while (done < bytes.length) {
        const n = readSync(
          fd,
          bytes,
          done,
          Math.min(bytes.length - done, 1 << 30),
          header.dataStart + entry.begin + done,
        );
        if (n <= 0) throw new UserError(`${path}: file ended inside tensor '${name}'`);
        done += n;
      }
      let t = fromBytes(bytes, entry.dtype, entry.shape);
      if ((opts.device && opts.device !== 'cpu') || (opts.dtype && opts.dtype !== entry.dtype)) {
        const moved = t.to({ device: opts.device, dtype: opts.dtype });
        t.dispose();
        t = moved;
      }
      out.set(name, t);
    }
  } catch (e) {
    for (const t of out.values()) t.dispose();
    throw e;
  } finally {
    closeSync(fd);
  }
  return out;
}

/** Writes tensors (any device; copied to the CPU one at a time) in name order. */
export function writeSafetensors(
  path: string,
  tensors: Map<string, Tensor> | Record<string, Tensor>,
  metadata: Record<string, string> = {},
): void {
  const entries = [...(tensors instanceof Map ? tensors.entries() : Object.entries(tensors))].sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length) header.__metadata__ = metadata;
  let offset = 0;
  for (const [name, t] of entries) {
    const format = toFormat[t.dtype];
    if (!format) throw new UserError(`cannot write tensor '${name}' of dtype ${t.dtype} to safetensors`);
    const bytes = t.numel * itemSize[t.dtype];
    header[name] = { dtype: format, shape: t.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = Buffer.from(JSON.stringify(header), 'utf8');
  const pad = (8 - (json.length % 8)) % 8; // keeps the data section 8-byte aligned
  if (pad) json = Buffer.concat([json, Buffer.alloc(pad, 0x20)]);
  const fd = openSync(path, 'w');
  try {
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(json.length));
    writeSync(fd, len);
    writeSync(fd, json);
    for (const [, t] of entries) writeSync(fd, toBytes(t));
  } finally {
    closeSync(fd);
  }
}
