import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errandBin } from '../support/built-artifacts';
import { docBlock, shellCommands } from '../support/doc-blocks';
import { temporalAddress, uniqueTaskQueue } from '../support/temporal';

/**
 * `errand workflow …` as users run it (bin/errand.js, the API in process against the run's Temporal): the
 * dry run's projection, a workflow found by name, usage errors, and a run started with --async and shown.
 */

const run = promisify(execFile);
let folder: string;
let env: NodeJS.ProcessEnv;
let connection: Connection;

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function errand(args: string[]): Promise<Ran> {
  try {
    const { stdout, stderr } = await run(process.execPath, [errandBin, ...args], { cwd: join(folder, 'work'), env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'errand-cli-workflow-'));
  const work = join(folder, 'work');
  mkdirSync(join(work, '.claude', 'workflows'), { recursive: true });
  writeFileSync(join(work, 'review.js'), "const notes = await parallel(args.files.map((file) => () => agent(`review ${file}`, { label: 'review' })));\nreturn notes;\n");
  writeFileSync(join(work, '.claude', 'workflows', 'sweep.js'), "await agent('sweep the repository', { label: 'sweep' });\nreturn 'swept';\n");
  env = {
    PATH: process.env.PATH,
    HOME: join(folder, 'home'),
    ERRAND_TEMPORAL_ADDRESS: temporalAddress(),
    ERRAND_TASK_QUEUE: uniqueTaskQueue('cli-workflow'),
    ERRAND_DATA_DIR: join(folder, 'data'),
    ERRAND_WORKING_DIR: work,
    ERRAND_PROVIDERS: JSON.stringify([{ name: 'p', kind: 'scripted', models: [{ id: 'm', contextWindow: 8_000, maxOutputTokens: 1_000, prices: { input: 2, output: 8 } }] }]),
    ERRAND_DEFAULT_MODEL: 'p/m',
  };
  connection = await Connection.connect({ address: temporalAddress() });
});

afterAll(async () => {
  await connection?.close();
});

describe('errand workflow', () => {
  it('run --dry-run prints the projection of a script file and starts nothing', async () => {
    const dry = await errand(['workflow', 'run', 'review.js', '--args', '{"files": ["a.ts", "b.ts", "c.ts"]}', '--dry-run']);
    expect(dry.stderr).toBe('');
    expect(dry.code).toBe(0);
    // 7,000 prompt tokens × $2/M + 1,000 answer tokens × $8/M = $0.022 per agent.
    expect(dry.stdout.split('\n').slice(0, 2)).toEqual(['Projected: 3 agents · 24000 tokens · $0.066', '  p/m: 3 × 8000 tokens × $0.022']);
    // A script file is named by its file, not as an inline script.
    expect(JSON.parse((await errand(['workflow', 'run', 'review.js', '--args', '{"files": ["a.ts"]}', '--dry-run', '--json'])).stdout)).toMatchObject({ scriptName: 'review.js' });
    const asJson = await errand(['workflow', 'run', 'sweep', '--dry-run', '--json']);
    expect(asJson.code).toBe(0);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ dryRun: true, scriptName: 'sweep', projection: { agents: 1, costMicroUsd: 22_000 } });
  });

  it('runs the commands of docs/workflows.md', async () => {
    const commands = shellCommands(docBlock('workflows-cli').text);
    expect(commands).toHaveLength(2);
    for (const command of commands) {
      expect(command.startsWith('errand ')).toBe(true);
      const ran = await run('sh', ['-c', `"${process.execPath}" "${errandBin}" ${command.slice('errand '.length)}`], { cwd: join(folder, 'work'), env });
      expect(ran.stdout).toMatch(/Projected: |"dryRun": true/);
    }
  });

  it('refuses a run over --cost-budget-usd and names an unknown workflow with where it looked', async () => {
    const over = await errand(['workflow', 'run', 'review.js', '--args', '{"files": ["a", "b"]}', '--cost-budget-usd', '0.01']);
    expect(over.code).toBe(1);
    expect(over.stderr).toContain('The projected run passes its money cap: costBudgetUsd: the run is projected at 2 agents and 16000 tokens, $0.044, more than its costBudgetUsd of $0.01');
    const unknown = await errand(['workflow', 'run', 'swep', '--dry-run']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no workflow named "swep" (a workflow is a file .claude/workflows/<name>.js; searched: project .claude/workflows, user ~/.claude/workflows); workflows found: sweep');
    expect(unknown.stderr).toContain('did you mean: sweep?');
  });

  it('answers usage errors with exit 2', async () => {
    expect(await errand(['workflow'])).toMatchObject({ code: 2, stderr: expect.stringContaining('errand workflow: a subcommand is needed: errand workflow run|show|pause|resume|cancel|restart') });
    expect(await errand(['workflow', 'run', 'review.js', '--args', '{not json'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--args is not valid JSON') });
    expect(await errand(['workflow', 'run', 'review.js', '--cost-budget-usd', 'lots'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--cost-budget-usd "lots" is not a number') });
  });

  it('run --async starts the run and prints its id; pause and cancel reach it', async () => {
    const started = await errand(['workflow', 'run', 'sweep', '--async']);
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    expect(id).toMatch(/^errand-wf-[0-9a-f]{16}$/);
    expect(started.stderr).toContain(`"errand workflow show ${id}" shows it`);
    const client = new Client({ connection });
    expect((await client.workflow.getHandle(id).describe()).type).toBe('workflowRunWorkflow');
    expect(await errand(['workflow', 'pause', id])).toMatchObject({ code: 0, stdout: `pause requested for ${id}\n` });
    expect(await errand(['workflow', 'cancel', id, '--reason', 'done testing'])).toMatchObject({ code: 0, stdout: `cancel requested for ${id}\n` });
    await client.workflow.getHandle(id).terminate('test over');
    expect(await errand(['workflow', 'cancel', id])).toMatchObject({ code: 0, stdout: `${id} has already ended (terminated); nothing to cancel\n` });
  });
});
