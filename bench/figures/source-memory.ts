import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { maxCachedSourceDirectories } from '../../src/contracts/limits/sources';
import { subagentStartOptions } from '../../src/observability/start-options';
import { benchModel, benchProviders, benchSubagentInput, mapLimit, sleep, spawnWorkerChild, uniqueId, workerStopSignal, type Bench } from '../harness';
import type { FigureResult } from '../figure';
import { benchMarker } from '../scripted-answers';
import { round, summarize } from '../stats';

/**
 * Issue 29 item 5: a worker's memory does not grow with the working directories it has served. One worker
 * child (`errand worker`, the bundled CLI) with a configured git store runs `total` delegations spread
 * over `directories` working directories (each with a project recipe of its own), `concurrency` at a
 * time; each one's model calls `load` for the git store's recipe and for its directory's own, so every
 * delegation resolves sources in its directory. RSS is sampled after the first `first` delegations and
 * again after all of them: the second must stay within 10 % of the first. Before the shared stores and
 * the bounded per-directory cache, each directory kept its own resolver, git store and parse cache for
 * the life of the worker (review N3).
 *
 * What is compared is what the worker keeps: at each point, after the worker has idled, the bench asks it
 * for a full collection of its main heap (the child runs with `--expose-gc` and bench/gc-on-signal.cjs)
 * and samples after that. Without it the two points fall wherever the last collection left a heap that
 * swings by 70–100 MB between collections under this load (runs gave 1.05 to 1.29 for the same code); the
 * RSS as found, before the collection, is reported beside the figure.
 */
const concurrency = 20;
const samplesPerPoint = 5;
/** How long the worker idles before each point (in-flight work ends, caches settle); the same before both. */
const settleMs = Number(process.env.BENCH_SETTLE_MS ?? 15_000);
/** After asking for a full collection: time for the collection and for freed pages to leave RSS. */
const afterCollectionMs = 3_000;

function recipe(description: string): string {
  return ['version: 1.0.0', `title: ${description}`, `description: ${description}`, `prompt: Do the ${description} work.`, ''].join('\n');
}

/** A bare repository holding one recipe, made with the git command line. */
function gitStore(folder: string): string {
  const work = join(folder, 'clone');
  const bare = join(folder, 'recipes.git');
  mkdirSync(join(work, 'recipes'), { recursive: true });
  writeFileSync(join(work, 'recipes', 'deploy.yaml'), recipe('deploy from git'));
  const git = (cwd: string, args: string[]) => execFileSync('git', args, { cwd, env: { ...process.env, GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'bench@example.invalid', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'bench@example.invalid' } });
  git(folder, ['init', '--quiet', '--bare', '--initial-branch=main', bare]);
  git(work, ['init', '--quiet', '--initial-branch=main']);
  git(work, ['add', '.']);
  git(work, ['commit', '--quiet', '-m', 'recipes']);
  git(work, ['push', '--quiet', bare, 'main']);
  return pathToFileURL(bare).href;
}

/** RSS of one worker child through one workload. */
interface Workload {
  /** After a full collection of the main heap. */
  afterFirst: number[];
  afterAll: number[];
  /** As found after the idle wait, before the collection. */
  afterFirstAsFound: number[];
  afterAllAsFound: number[];
  /** RSS right after each step of `first` delegations. */
  curve: string[];
}

/** Runs `total` source-loading delegations over `directories` working directories on a fresh worker child. */
async function runWorkload(bench: Bench, name: string, total: number, directories: number, first: number): Promise<Workload> {
  const taskQueue = uniqueId(`bench-${name}`);
  const root = join(bench.workingDir, name);
  const url = gitStore(join(bench.tempDir, `${name}-git`));
  const folders = Array.from({ length: directories }, (_, index) => join(root, `dir-${index}`));
  for (const [index, folder] of folders.entries()) {
    mkdirSync(join(folder, '.goose', 'recipes'), { recursive: true });
    writeFileSync(join(folder, '.goose', 'recipes', 'own.yaml'), recipe(`own recipe of directory ${index}`));
  }
  const worker = await spawnWorkerChild(bench, {
    name: `${name}-worker`,
    taskQueue,
    dataDir: join(bench.tempDir, `data-${name}`),
    modelHeartbeatTimeoutMs: bench.config.subagent.activity.modelHeartbeatTimeoutMs,
    collectGarbageOnSignal: true,
    env: { ERRAND_STORES: JSON.stringify([{ type: 'git', url, ref: 'main', subfolder: 'recipes', cacheDirectory: join(bench.tempDir, `${name}-git-cache`) }]) },
  });
  const samples = async (): Promise<number[]> => {
    const values: number[] = [];
    for (let index = 0; index < samplesPerPoint; index += 1) {
      values.push(worker.rssBytes() / 1024 / 1024);
      await sleep(1_000);
    }
    return values;
  };
  /** RSS as found after the idle wait, then after a full collection. */
  const sample = async (): Promise<{ asFound: number[]; collected: number[] }> => {
    await sleep(settleMs);
    const asFound = await samples();
    worker.collectGarbage();
    await sleep(afterCollectionMs);
    return { asFound, collected: await samples() };
  };
  let failures = 0;
  const run = (from: number, to: number) => mapLimit(Array.from({ length: to - from }, (_, offset) => from + offset), concurrency, async (index) => {
    const workflowId = `${taskQueue}-${index}`;
    const input = benchSubagentInput(bench, `Load the sources. ${benchMarker({ load: 'deploy,own' })}`, {
      route: { provider: benchProviders.http, model: benchModel },
      workingDir: folders[index % directories] ?? root,
      maxDepth: 2,
      maxTurns: 5,
    });
    const result = await bench.client.workflow.execute('subagentWorkflow', { taskQueue, workflowId, args: [input], ...subagentStartOptions(input, { workflowId, startedBy: 'bench' }) });
    if (typeof result !== 'object' || result === null || (result as { status?: unknown }).status !== 'completed') failures += 1;
  });
  const workload: Workload = { afterFirst: [], afterAll: [], afterFirstAsFound: [], afterAllAsFound: [], curve: [] };
  try {
    await worker.ready;
    await run(0, first);
    ({ asFound: workload.afterFirstAsFound, collected: workload.afterFirst } = await sample());
    for (let done = first; done < total; done = Math.min(total, done + first)) {
      await run(done, Math.min(total, done + first));
      workload.curve.push(`${Math.min(total, done + first)}: ${round(worker.rssBytes() / 1024 / 1024)} MB`);
      process.stdout.write(`bench: ${name} (${directories} directories) after ${workload.curve.at(-1) ?? ''}\n`);
    }
    ({ asFound: workload.afterAllAsFound, collected: workload.afterAll } = await sample());
  } finally {
    worker.kill(workerStopSignal());
    await worker.exited;
  }
  if (failures > 0) throw new Error(`${failures} of ${total} source-loading delegations did not complete; see bench/.work/${name}-worker.log`);
  return workload;
}

/**
 * The figure, and its control: the same delegations in one working directory on another fresh worker.
 * What the worker keeps per working directory is the difference between the two; what both grow by is
 * the rest of the worker (caches that fill, the heap settling).
 */
export async function measureSourceMemory(bench: Bench, total: number, directories: number, first: number): Promise<FigureResult[]> {
  const spread = await runWorkload(bench, 'source-memory', total, directories, first);
  const control = await runWorkload(bench, 'source-memory-one-dir', total, 1, first);
  const before = summarize(spread.afterFirst);
  const after = summarize(spread.afterAll);
  const alone = summarize(control.afterAll);
  const ratio = after.median / before.median;
  const spreadRatio = after.median / alone.median;
  const workloadNote = `each delegation's model calls load("deploy") (a configured git store, fetched once and shared) and load("own") (its directory's .goose/recipes), then answers; ${concurrency} at a time, directory = index mod the directory count; the worker keeps the project folders of ${maxCachedSourceDirectories} directories (maxCachedSourceDirectories).`;
  return [
    {
      id: 'worker-memory-directories',
      description: `Worker child RSS after ${total} source-loading delegations across ${directories} working directories, vs after ${first}`,
      value: round(after.median, 1),
      unit: 'MB',
      min: round(after.min, 1),
      max: round(after.max, 1),
      baseline: round(before.median, 1),
      ratio: round(ratio, 3),
      target: 'ratio <= 1.10',
      met: ratio <= 1.1,
      runs: spread.afterAll.length,
      notes: [
        `${samplesPerPoint} samples of /proc/<pid>/status VmRSS, 1 s apart, after ${settleMs / 1000} s idle and a full collection of the worker's main heap (${afterCollectionMs / 1000} s before sampling), after the first ${first} delegations (median ${round(before.median, 1)} MB) and after all ${total} (median ${round(after.median, 1)} MB).`,
        `RSS as found after the idle wait, before the collection: ${round(summarize(spread.afterFirstAsFound).median, 1)} MB after ${first}, ${round(summarize(spread.afterAllAsFound).median, 1)} MB after ${total} (ratio ${round(summarize(spread.afterAllAsFound).median / summarize(spread.afterFirstAsFound).median, 3)}; it moves with where the last collection happened, not with what is kept).`,
        `RSS right after each step: ${spread.curve.join(', ')}.`,
        `control, the same ${total} delegations in 1 working directory on a fresh worker, measured the same way: ${round(summarize(control.afterFirst).median, 1)} MB after ${first}, ${round(alone.median, 1)} MB after ${total} (as found: ${round(summarize(control.afterFirstAsFound).median, 1)} and ${round(summarize(control.afterAllAsFound).median, 1)} MB; ${control.curve.join(', ')}); ${directories} directories / 1 directory after ${total}: ${round(spreadRatio, 3)}.`,
        workloadNote,
      ],
    },
    {
      id: 'worker-memory-directories-vs-one',
      description: `Worker child RSS after ${total} source-loading delegations: ${directories} working directories vs 1 (what the worker keeps per directory)`,
      value: round(after.median, 1),
      unit: 'MB',
      min: round(after.min, 1),
      max: round(after.max, 1),
      baseline: round(alone.median, 1),
      ratio: round(spreadRatio, 3),
      target: 'reported (no target)',
      met: null,
      runs: spread.afterAll.length + control.afterAll.length,
      notes: [workloadNote],
    },
  ];
}
