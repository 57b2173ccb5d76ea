import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../src/dev/free-port';
import { cliBundleEntry, cliBundleIsFresh } from '../support/built-artifacts';
import { temporalAddress, temporalHttpUrl } from '../support/temporal';

/**
 * The bundled CLI that `npm ci` builds (scripts/build-cli.ts), as the run's global setup left it in
 * dist/cli-bundle/ (rebuilt there when a source is newer, test/support/built-artifacts.ts), run the way
 * bin/errand.js runs it, for commands that load different chunks — the command table alone, the recipe
 * checker (YAML, templates), the HTTP client, and the in-process API with the Temporal client. The other
 * process tests run bin/errand.js, which picks the same bundle because it is fresh.
 */

const run = promisify(execFile);
const root = resolve(__dirname, '..', '..');
const outdir = dirname(cliBundleEntry);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the bundle's entry like bin/errand.js does (import it, call runCli). */
async function bundled(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const script = 'import(process.argv[1]).then(async (cli) => { process.exitCode = await cli.runCli(process.argv.slice(2)); })';
  try {
    const { stdout, stderr } = await run(process.execPath, ['-e', script, join(outdir, 'errand.mjs'), ...args], { cwd: root, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('the bundled CLI', () => {
  it('is fresh: bin/errand.js runs it rather than the sources', () => {
    expect(cliBundleIsFresh()).toBe(true);
  });

  it('is split into chunks: the entry holds the command table only', () => {
    expect(existsSync(join(outdir, 'errand.mjs'))).toBe(true);
    expect(readdirSync(join(outdir, 'chunks')).length).toBeGreaterThan(5);
  });

  it('keeps the worker package and the AWS SDK out of `errand api` at start: only dev and worker load the one, the first S3 call the other', () => {
    // esbuild's metafile: every output chunk with its imports. A command's chunk loads at once what it
    // imports statically (chunks and external packages), transitively; dynamic imports load on use.
    const meta = JSON.parse(readFileSync(join(outdir, 'meta.json'), 'utf8')) as { outputs: Record<string, { entryPoint?: string; inputs: Record<string, unknown>; imports: { path: string; kind: string; external?: boolean }[] }> };
    const loadedAtOnce = (entryPoint: string): Set<string> => {
      const start = Object.keys(meta.outputs).find((file) => meta.outputs[file]?.entryPoint === entryPoint);
      if (start === undefined) throw new Error(`no chunk for ${entryPoint} in the metafile`);
      const seen = new Set<string>();
      const packages = new Set<string>();
      const pending = [start];
      for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
        if (seen.has(file)) continue;
        seen.add(file);
        for (const imported of meta.outputs[file]?.imports ?? []) {
          if (imported.kind === 'dynamic-import') continue;
          if (imported.external) packages.add(imported.path);
          else pending.push(imported.path);
        }
      }
      // Bundled packages: the source files inside the chunks loaded at once.
      for (const file of seen) for (const input of Object.keys(meta.outputs[file]?.inputs ?? {})) packages.add(input);
      return packages;
    };
    const api = [...loadedAtOnce('src/cli/api-command.ts')];
    expect(api.filter((name) => name.startsWith('@temporalio/worker') || name.includes('node_modules/@aws-sdk/client-s3/'))).toEqual([]);
    expect(api).toContain('node:util');
    expect(api).toContain('src/api/server.ts');
    expect(loadedAtOnce('src/cli/stack-commands.ts')).toContain('@temporalio/worker');
    // Loaded on use: the S3 blob store's first call imports the SDK's chunk.
    expect(Object.values(meta.outputs).some((output) => Object.keys(output.inputs).some((input) => input.includes('node_modules/@aws-sdk/client-s3/')))).toBe(true);
  });

  it('reaches every bundled package that errand loads with import() through commonJsExports (a CommonJS chunk exports only `default`)', () => {
    const meta = JSON.parse(readFileSync(join(outdir, 'meta.json'), 'utf8')) as { inputs: Record<string, { imports: { path: string; kind: string; external?: boolean; original?: string }[] }> };
    const loaded = Object.entries(meta.inputs).flatMap(([file, input]) =>
      file.startsWith('src/') ? input.imports.filter((imported) => imported.kind === 'dynamic-import' && !imported.external && imported.path.includes('node_modules/')).map((imported) => ({ file, specifier: imported.original ?? imported.path })) : [],
    );
    // The two there are today: the worker's OpenTelemetry interceptors (tracing on) and the AWS S3 SDK (the S3 stores).
    expect(loaded.map(({ specifier }) => specifier).sort()).toEqual(['@aws-sdk/client-s3', '@temporalio/interceptors-opentelemetry/lib/worker/index.js']);
    for (const { file } of loaded) expect(readFileSync(join(root, file), 'utf8'), file).toContain('commonJsExports(');
  });

  it('prints the usage', async () => {
    const help = await bundled(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: errand <command>');
    expect(help.stdout).toMatch(/^\s+peek\s+show a delegation's state/m);
  });

  it('checks recipes (YAML and templates load from their chunk)', async () => {
    const checked = await bundled(['recipes', 'check', join(root, 'examples', 'recipes')]);
    expect(checked.stderr).toBe('');
    expect(checked.code).toBe(0);
    expect(checked.stdout).toMatch(/3 file\(s\) checked, 0 failed/);
  });

  it('reports usage errors with exit 2 and an unreachable API with exit 1', async () => {
    const usage = await bundled(['peek']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('errand peek: usage: errand peek <delegation id>');
    const port = await freePort();
    const unreachable = await bundled(['peek', 'errand-0000000000000000'], { ERRAND_API_URL: `http://127.0.0.1:${port}` });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(`cannot reach the errand API at http://127.0.0.1:${port}`);
  });

  it('runs the API in process against Temporal: an unknown delegation is a 404', async () => {
    const unknown = await bundled(['peek', 'errand-0000000000000000', '--json'], { ERRAND_TEMPORAL_ADDRESS: temporalAddress() });
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ status: 404 });
  });

  it('names an unreachable Temporal by its address and settings in one line, in process (a 503, not a 500 and a log line)', async () => {
    const nobody = `127.0.0.1:${await freePort()}`;
    const down = await bundled(['list'], { ERRAND_TEMPORAL_ADDRESS: nobody, ERRAND_DATA_DIR: join(root, 'test-artifacts', 'no-dev-stack') });
    expect(down.code).toBe(1);
    expect(down.stderr.trim()).toBe(
      `errand list: Temporal is unavailable: Temporal at ${nobody} cannot be reached (Failed to connect before the deadline): start it, or set the address (ERRAND_TEMPORAL_ADDRESS, TEMPORAL_ADDRESS or the Temporal config profile)`,
    );
  });

  it('peeks through Temporal\'s HTTP API without the gRPC client: an unreachable gRPC address does not matter', async () => {
    const nobody = `127.0.0.1:${await freePort()}`;
    const unknown = await bundled(['peek', 'errand-0000000000000000', '--json'], { ERRAND_TEMPORAL_ADDRESS: nobody, ERRAND_TEMPORAL_HTTP_URL: temporalHttpUrl() });
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ status: 404, title: 'No such delegation' });
  });
});
