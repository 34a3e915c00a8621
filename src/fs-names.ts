// Names for files this tool writes. node:crypto is not used for them: loading it costs several
// ms of start-up on every command that reads a catalog or writes a setting, and neither name
// needs to be unpredictable, only distinct.

let counter = 0;

/** Distinct per process and call: `<pid>.<time>.<n>`, for a temporary file renamed into place. */
export function tempSuffix(): string {
  counter++;
  return `${process.pid}.${Date.now().toString(36)}.${counter}`;
}

const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK = 0xffffffffffffffffn;

/** 16 hex digits of the 64-bit FNV-1a hash of the text's UTF-8 bytes: a stable directory name. */
export function shortHash(text: string): string {
  let hash = FNV_OFFSET;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= BigInt(byte);
    hash = (hash * FNV_PRIME) & MASK;
  }
  return hash.toString(16).padStart(16, '0');
}
