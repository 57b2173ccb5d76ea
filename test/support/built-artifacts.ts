import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

/**
 * What users run, for the tests that run errand as a process: the `errand` command (bin/errand.js over the
 * CLI bundle, dist/cli-bundle/, as `npm ci` and `npm run build` leave it) and the worker as the image
 * starts it (`node dist/worker/main.js`, the tsc build of `npm run build`). The run's global setup calls
 * {@link ensureBuiltArtifacts} once: what is missing or older than the sources is rebuilt, what is fresh is
 * kept, so a run after an edit tests the edit through the artifacts and a run without one builds nothing.
 */

const run = promisify(execFile);
const projectRoot = resolve(__dirname, '..', '..');

/** The `errand` command: run it as `node <errandBin> <args>`. */
export const errandBin = join(projectRoot, 'bin', 'errand.js');
/** The worker the image starts (Dockerfile: `node dist/worker/main.js`). */
export const distWorker = join(projectRoot, 'dist', 'worker', 'main.js');
/** The entry of the CLI bundle that bin/errand.js imports when it is fresh. */
export const cliBundleEntry = join(projectRoot, 'dist', 'cli-bundle', 'errand.mjs');

function modifiedMs(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function newestUnder(folder: string): number {
  let newest = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : modifiedMs(path));
  }
  return newest;
}

/** The newest change among what a build reads: the sources, package.json, the lock file and the install. */
function newestInput(extra: string[]): number {
  const inputs = ['package.json', 'package-lock.json', join('node_modules', '.package-lock.json'), ...extra].map((file) => modifiedMs(join(projectRoot, file)));
  return Math.max(newestUnder(join(projectRoot, 'src')), ...inputs);
}

/** Whether bin/errand.js would run the bundle (its own rule: built after every source and install change). */
export function cliBundleIsFresh(): boolean {
  const built = modifiedMs(cliBundleEntry);
  return built > 0 && newestInput([]) <= built;
}

/** Whether dist/worker/main.js (with the rest of the tsc build) is at least as new as the sources and the compiler settings. */
export function distWorkerIsFresh(): boolean {
  const built = modifiedMs(distWorker);
  return built > 0 && newestInput(['tsconfig.json', 'tsconfig.build.json']) <= built;
}

/**
 * `npm run build`'s tsc step, without its type check (`npm test` typechecks the same files beside the
 * tests; the emitted JavaScript is the same). Its time stamp is when the build began, so a source saved
 * meanwhile counts as newer.
 */
async function buildDistWorker(): Promise<void> {
  const began = new Date();
  await run(join(projectRoot, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json', '--noCheck'], { cwd: projectRoot, maxBuffer: 16 * 1024 * 1024 });
  utimesSync(distWorker, began, began);
}

async function buildCliBundle(): Promise<void> {
  await run(process.execPath, ['--import', 'tsx', join('scripts', 'build-cli.ts')], { cwd: projectRoot, maxBuffer: 16 * 1024 * 1024 });
}

/** Whether a process with this id is alive (a lock left by a killed run is taken over). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Holds dist/.build-lock while `work` runs: the unit and temporal projects' setups (and two runs in one
 * checkout) may check at the same moment, and a build removes the folder the other would read.
 */
async function withBuildLock<T>(work: () => Promise<T>): Promise<T> {
  const lock = join(projectRoot, 'dist', '.build-lock');
  mkdirSync(join(projectRoot, 'dist'), { recursive: true });
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(existsSync(join(lock, 'pid')) ? readFileSync(join(lock, 'pid'), 'utf8') : 'NaN');
      if (Number.isInteger(holder) && !alive(holder)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`another build has held ${lock} for 5 minutes; remove it if no test run is building`);
      else await new Promise((wait) => setTimeout(wait, 250));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Rebuilds what is stale: the CLI bundle, and with `worker` the tsc build holding dist/worker/main.js. Answers
 * what it built (the global setup prints it). Never skips: a failed build fails the run's set-up.
 */
export async function ensureBuiltArtifacts(options: { worker: boolean }): Promise<string[]> {
  return withBuildLock(async () => {
    const built: string[] = [];
    const steps: Promise<void>[] = [];
    if (!cliBundleIsFresh()) steps.push(buildCliBundle().then(() => void built.push('CLI bundle (dist/cli-bundle/)')));
    if (options.worker && !distWorkerIsFresh()) steps.push(buildDistWorker().then(() => void built.push('worker (dist/worker/main.js)')));
    await Promise.all(steps);
    return built;
  });
}
