// domain -> byte offset for the journal, in typed arrays instead of a Map<string, number>.
// A Map of a million domains costs ~100 MB of heap (a string and an entry each); this table keeps
// a 64-bit hash of the domain and its offset, 16 bytes a slot, ~32 MB for a million at most
// half full. The domain itself stays on disk: the journal compares it when it reads the line back,
// so a hash collision (odds about n^2 / 2^65, ~3e-8 for a million) can never return another
// domain's result; at worst has() says yes and get() then finds nothing.

const INITIAL_CAPACITY = 1 << 12;
const EMPTY = -1;

/** FNV-1a over UTF-16 code units, then a final avalanche (murmur3 fmix32). */
function hashA(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** An independent second hash (different seed and multiplier), so the pair acts as 64 bits. */
function hashB(text: string): number {
  let h = 0x9747b28c;
  for (let i = 0; i < text.length; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), 0x5bd1e995);
    h ^= h >>> 15;
  }
  h = Math.imul(h ^ (h >>> 13), 0x27d4eb2f);
  return (h ^ (h >>> 16)) >>> 0;
}

export class OffsetIndex {
  private hashesA = new Uint32Array(INITIAL_CAPACITY);
  private hashesB = new Uint32Array(INITIAL_CAPACITY);
  private offsets = new Float64Array(INITIAL_CAPACITY).fill(EMPTY);
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(key: string): number | undefined {
    const slot = this.find(hashA(key), hashB(key));
    const offset = this.offsets[slot];
    return offset === EMPTY ? undefined : offset;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** Adds the key or moves it to a new offset (the latest line of a domain wins). */
  set(key: string, offset: number): void {
    this.place(hashA(key), hashB(key), offset);
    if (this.count * 2 > this.offsets.length) this.grow();
  }

  /** The slot holding this hash pair, or the empty slot where it would go (linear probing). */
  private find(a: number, b: number): number {
    const mask = this.offsets.length - 1;
    let slot = a & mask;
    while (this.offsets[slot] !== EMPTY && (this.hashesA[slot] !== a || this.hashesB[slot] !== b)) {
      slot = (slot + 1) & mask;
    }
    return slot;
  }

  private place(a: number, b: number, offset: number): void {
    const slot = this.find(a, b);
    if (this.offsets[slot] === EMPTY) this.count++;
    this.hashesA[slot] = a;
    this.hashesB[slot] = b;
    this.offsets[slot] = offset;
  }

  private grow(): void {
    const { hashesA, hashesB, offsets } = this;
    const capacity = offsets.length * 2;
    this.hashesA = new Uint32Array(capacity);
    this.hashesB = new Uint32Array(capacity);
    this.offsets = new Float64Array(capacity).fill(EMPTY);
    this.count = 0;
    for (let i = 0; i < offsets.length; i++) {
      if (offsets[i] !== EMPTY) this.place(hashesA[i], hashesB[i], offsets[i]);
    }
  }
}
