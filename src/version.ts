// The version of this build: esbuild replaces __VERSION__ with package.json's version
// (scripts/build.mjs); run from source (the tests), it is a development version.
declare const __VERSION__: string | undefined;

export function version(): string {
  return typeof __VERSION__ === 'string' ? __VERSION__ : '0.0.0-dev';
}
