/**
 * The exports of a CommonJS package loaded with `import()`, the same wherever errand runs. Node's loader
 * gives a CommonJS file's exports by name (and the whole `module.exports` as `default`); tsx does too. In an
 * esbuild bundle split at dynamic imports (the CLI bundle, scripts/build-cli.ts; the API's Lambda bundle,
 * infra/lib/api-bundle.ts) a CommonJS file reached only by `import()` becomes a chunk whose one export is
 * `default`, so `const { X } = await import('pkg')` there gives `X === undefined` ("X is not a
 * constructor" at its first use). Every `import()` of a CommonJS package goes through this.
 *
 * `probe` is an export the module must have: the loaded namespace when it has it, else its `default`
 * when that has it; otherwise an error that names the package and the export, at the load rather than at
 * the first call.
 */
export function commonJsExports<T extends object>(loaded: T, probe: keyof T & string, packageName: string): T {
  if (probe in loaded) return loaded;
  const fallback: unknown = (loaded as { default?: unknown }).default;
  if (typeof fallback === 'object' && fallback !== null && probe in fallback) return fallback as T;
  throw new Error(`${packageName} loaded without its export "${probe}": the installed package does not match the version errand was built for (package.json)`);
}
