import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * Which test files need the run's Temporal dev server: exactly those that import test/support/temporal.ts,
 * directly or through other test helpers (test/api/api-harness.ts, test/support/worker-process.ts, ...).
 * vitest.config.ts puts them in the `temporal` project, which starts the dev server; every other file is in
 * the `unit` project and runs without one. The imports decide, not a list: a new test lands in the right
 * tier by what it uses.
 */

/** The helper whose importers need the dev server. */
const temporalSupport = resolve(__dirname, 'temporal.ts');

/** Relative import specifiers of a TypeScript file (static, dynamic and re-exports). */
function relativeImports(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const specifiers: string[] = [];
  // Bounded by the file's length; the patterns match `from './x'` and `import('./x')`.
  for (const match of source.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
    if (match[1]) specifiers.push(match[1]);
  }
  return specifiers;
}

/** The file an import specifier names (TypeScript sources only), or undefined for anything else. */
function resolveImport(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, base.replace(/\.js$/, '.ts'), join(base, 'index.ts')]) {
    if (candidate.endsWith('.ts') && existsSync(candidate)) return candidate;
  }
  return undefined;
}

function typeScriptFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return typeScriptFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * Test files (paths relative to `root`) that reach test/support/temporal.ts through imports inside the
 * test folder. Imports of src/ are not followed: production code never imports test helpers.
 */
export function testFilesUsingTemporal(root: string): string[] {
  const testRoot = join(root, 'test');
  const importers = new Map<string, string[]>();
  for (const file of typeScriptFiles(testRoot)) {
    for (const specifier of relativeImports(file)) {
      const target = resolveImport(file, specifier);
      if (target === undefined || !target.startsWith(testRoot)) continue;
      importers.set(target, [...(importers.get(target) ?? []), file]);
    }
  }
  // Everything that imports the helper, then everything that imports those, and so on.
  const reached = new Set<string>([temporalSupport]);
  const queue = [temporalSupport];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const importer of importers.get(file) ?? []) {
      if (reached.has(importer)) continue;
      reached.add(importer);
      queue.push(importer);
    }
  }
  return [...reached]
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => relative(root, file).split('\\').join('/'))
    .sort();
}
