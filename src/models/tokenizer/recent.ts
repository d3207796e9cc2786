// A map of the most recently used entries, at most `capacity` of them (the least recently used
// dropped first): the tokenizer's memory of long encodes and decodes (tokenizer.ts says why).
export class RecentMap<V> {
  private readonly entries = new Map<string, V>();

  constructor(private readonly capacity: number) {}

  /** The value under `key` (now the most recently used), or what `make` gives, remembered. */
  getOrMake(key: string, make: () => V): V {
    const seen = this.entries.get(key);
    if (seen !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, seen);
      return seen;
    }
    const value = make();
    if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, value);
    return value;
  }
}
