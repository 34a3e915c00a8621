// One V8 setting for the life of a batch: no allocation-site pretenuring.
//
// V8 watches where objects are allocated, and when most of those made at one place in the code
// outlive a minor GC, it starts making them directly in the old generation. A batch has hundreds
// of thousands of requests, each a graph of short-lived objects, and one of them made in the old
// generation keeps everything it points to alive through every minor GC until the next full one:
// those objects get copied and promoted too, which makes more places look long-lived. Whether a
// run falls into that depended on the exact shape of the code (assigning a closure to a property
// directly or through a const flipped it): 50,000 lookups promoted ~240 MB with it and ~60 MB
// without, and minor GC time fell from ~0.8-1.0 s to ~0.35-0.43 s (docs/performance.md, "Eighth
// pass"). A batch's long-lived data (the journal's index, the seen domains) lives in typed
// arrays, which this does not touch.
//
// Set at run time, before the first lookup: measured, that has the same effect as the command-line
// flag. Not before the vendor files a batch loads: V8 refuses a code cache made under other flags
// (src/cli-loader.ts). node:v8 loads on demand, off every other command's start.
export async function stopPretenuring(): Promise<void> {
  const { setFlagsFromString } = await import('node:v8');
  setFlagsFromString('--no-allocation-site-pretenuring');
}
