/** 'cpu', 'cuda' (the current CUDA device) or 'cuda:N'. */
export type Device = 'cpu' | 'cuda' | `cuda:${number}`;

export function deviceName(type: number, index: number): Device {
  if (type === 0) return 'cpu';
  if (type === 1) return `cuda:${index < 0 ? 0 : index}`;
  throw new TypeError(`device type ${type} is not supported by agent-r1 (cpu and cuda are)`);
}

export function checkDevice(device: string): Device {
  if (device === 'cpu' || device === 'cuda' || /^cuda:\d+$/.test(device)) return device as Device;
  throw new TypeError(`bad device '${device}'; use 'cpu', 'cuda' or 'cuda:N'`);
}

/** N of 'cuda:N', else 0: the device index the native CUDA calls take ('cuda' and 'cpu' give 0). */
export function cudaIndex(device: Device): number {
  return device.startsWith('cuda:') ? Number(device.slice(5)) : 0;
}
