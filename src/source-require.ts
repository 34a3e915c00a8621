// How a lazily loaded package is found when the code runs from source (the tests), where there is
// no require(): node:module's createRequire, itself loaded only then.
//
// In the bundle (scripts/build.mjs) each caller's own literal require() runs instead: esbuild
// turns it into a require of the package's file in dist/vendor/. A static import of node:module
// for the fallback was loaded by every command (~0.5 ms of each start; docs/performance.md).

/** `specifier` as a require() in the module at `moduleUrl` would resolve it. */
export function requireFromSource(moduleUrl: string, specifier: string): unknown {
  return process.getBuiltinModule('node:module').createRequire(moduleUrl)(specifier);
}
