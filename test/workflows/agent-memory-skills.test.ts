import { mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sendMessageUpdate, transcriptQuery, type TranscriptView } from '../../src/contracts/subagent-messages';
import type { ChatMessage, ModelRequest } from '../../src/contracts/model';
import { ConversationScripts, toolResults } from '../support/conversation-scripts';
import { startS3Server, type S3TestServer } from '../support/s3-server';
import { useWorkerStack, type WorkerStack } from '../support/worker-stack';
import { writeFiles } from '../sources/source-files';
import { S3Store } from '../../src/sources/s3-store';
import { findSkills, StoreSkillPlace } from '../../src/sources/skill-sources';

/**
 * Claude Code's `memory` and `skills` in agent files, run end to end on the real dev server with the
 * scripted model (decision 0031): a skill's SKILL.md reaches the system prompt; what an agent writes to its
 * memory with its memory tools is in the system prompt of the next delegation of the same agent — on the
 * local blob store, and on S3 (SeaweedFS) across two workers with data folders of their own, so the memory
 * is in the shared store and nowhere else. The working directory never gets a memory file; an unknown
 * skill is an error naming the field and the skills found.
 */

let workingDir: string;
let s3: S3TestServer | undefined;
const previousEnv = { AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY };
const scripts = new ConversationScripts();

beforeAll(async () => {
  workingDir = realpathSync(mkdtempSync(join(tmpdir(), 'errand-memory-skills-')));
  writeFiles(join(workingDir, '.claude'), {
    'agents/reviewer.md': ['---', 'name: reviewer', 'description: Reviews changes and remembers the team\'s conventions.', 'tools: Read', 'memory: project', 'skills: review-style', '---', 'You review changes.', ''].join('\n'),
    'agents/tidy.md': ['---', 'name: tidy', 'description: Tidies up.', 'skills:', '  - review-style', '  - deploy-checklist', '---', 'You tidy.', ''].join('\n'),
    'skills/review-style/SKILL.md': ['---', 'name: review-style', 'description: How reviews are written here.', '---', 'Start every review with a one-line verdict.', ''].join('\n'),
    'skills/testing/SKILL.md': ['---', 'name: testing', 'description: How tests are written.', '---', 'Tests use real parts.', ''].join('\n'),
  });
}, 120_000);

afterAll(async () => {
  await s3?.stop();
  for (const [name, value] of Object.entries(previousEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  if (workingDir) rmSync(workingDir, { recursive: true, force: true });
});

/** A worker of its own whose sessions run in the file's working folder (the agent files, the project's memory). */
function memoryWorker(label: string, env?: () => Record<string, string>): WorkerStack {
  return useWorkerStack(() => ({ label, workingDir, scripted: { scripted: { model: scripts.model } }, ...(env ? { env: env() } : {}) }));
}

async function startSession(stack: WorkerStack): Promise<WorkflowHandle> {
  return stack.startSession({ tenant: 'acme' }, 'memory-skills');
}

/** Sends a message and waits for the session's reply. */
async function reply(handle: WorkflowHandle, message: string): Promise<void> {
  await handle.executeUpdate(sendMessageUpdate, { args: [{ message }] });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const view: TranscriptView = await handle.query(transcriptQuery);
    if (view.entries.some((entry) => entry.role === 'assistant') && view.state === 'waiting') return;
    if (Date.now() > deadline) throw new Error(`no reply (state ${view.state})`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

function systemOf(request: ModelRequest | undefined): string {
  const system = request?.messages.find((message): message is Extract<ChatMessage, { role: 'system' }> => message.role === 'system');
  return system?.content ?? '';
}

/** Two delegations of `reviewer` in two sessions, on the worker(s) given: the first writes its memory, the second starts with it. */
async function twoDelegations(label: string, first: WorkerStack, second: WorkerStack): Promise<{ firstSystem: string; secondSystem: string; firstTools: string[]; written: string }> {
  const note = `- The team indents with tabs (${label}).`;
  const writer = scripts.add(`${label}-writer`, [
    { toolCalls: [{ name: 'memory__write', arguments: { path: 'memory/MEMORY.md', content: `# Reviewer memory\n${note}\n` } }] },
    { toolCalls: [{ name: 'memory__list', arguments: {} }] },
    { text: 'Verdict: fine. Noted the indentation.' },
  ]);
  const reader = scripts.add(`${label}-reader`, [{ text: 'Verdict: fine. Tabs, as remembered.' }]);
  const firstSession = scripts.add(`${label}-s1`, [{ toolCalls: [{ name: 'delegate', arguments: { source: 'reviewer', instructions: `Review the change ${writer}` } }] }, { text: 'reviewed' }]);
  const secondSession = scripts.add(`${label}-s2`, [{ toolCalls: [{ name: 'delegate', arguments: { source: 'reviewer', instructions: `Review again ${reader}` } }] }, { text: 'reviewed again' }]);
  await reply(await startSession(first), `go ${firstSession}`);
  expect(toolResults(scripts.of(`${label}-s1`)[1])[0]?.content).toContain('Verdict: fine. Noted the indentation.');
  const written = toolResults(scripts.of(`${label}-writer`)[1])[0]?.content ?? '';
  expect(toolResults(scripts.of(`${label}-writer`)[2])[1]?.content).toBe('memory/MEMORY.md');
  await reply(await startSession(second), `go ${secondSession}`);
  expect(toolResults(scripts.of(`${label}-s2`)[1])[0]?.content).toContain('Tabs, as remembered.');
  return {
    firstSystem: systemOf(scripts.of(`${label}-writer`)[0]),
    secondSystem: systemOf(scripts.of(`${label}-reader`)[0]),
    firstTools: scripts.of(`${label}-writer`)[0]?.tools.map((tool) => tool.name) ?? [],
    written,
  };
}

describe('memory and skills on the local blob store', () => {
  const stack = memoryWorker('memory-skills');

  test('the skill reaches the system prompt; memory written in one delegation starts the next; the working directory gets nothing', async () => {
    const before = readdirSync(workingDir).sort();
    const { firstSystem, secondSystem, firstTools, written } = await twoDelegations('local', stack, stack);
    expect(firstSystem).toContain('# Skills');
    expect(firstSystem).toContain('## Skill: review-style');
    expect(firstSystem).toContain('Start every review with a one-line verdict.');
    expect(firstSystem).toContain('# Agent memory');
    expect(firstSystem).toContain('memory/MEMORY.md is empty or does not exist yet.');
    // `tools: Read` narrows the developer tools; the memory tools come with `memory`, as in Claude Code.
    expect(firstTools.sort()).toEqual(['developer__read_file', 'memory__edit', 'memory__list', 'memory__read', 'memory__write']);
    expect(written).toBe(`Wrote memory/MEMORY.md (${Buffer.byteLength('# Reviewer memory\n- The team indents with tabs (local).\n', 'utf8')} bytes)`);
    expect(secondSystem).toContain('<agent-memory>\n# Reviewer memory\n- The team indents with tabs (local).\n</agent-memory>');
    expect(secondSystem).toContain('Start every review with a one-line verdict.');
    expect(readdirSync(workingDir).sort()).toEqual(before);
    expect(scripts.model.rejectedCalls ?? []).toEqual([]);
  });

  test('an unknown skill is an error naming the field, the skill and the skills found; the agent does not start', async () => {
    const session = scripts.add('unknown-skill', [{ toolCalls: [{ name: 'delegate', arguments: { source: 'tidy', instructions: 'tidy up' } }] }, { text: 'could not' }]);
    await reply(await startSession(stack), `go ${session}`);
    const result = toolResults(scripts.of('unknown-skill')[1])[0];
    expect(result?.isError).toBe(true);
    expect(result?.content).toContain('tidy.md: skills: no skill named "deploy-checklist" (a skill is a folder .claude/skills/<name>/ with a SKILL.md; searched: ');
    expect(result?.content).toContain('skills found: review-style, testing');
  });
});

describe('memory on S3 (SeaweedFS), shared by workers that share nothing else', () => {
  let env: Record<string, string>;

  beforeAll(async () => {
    s3 = await startS3Server();
    process.env.AWS_ACCESS_KEY_ID = s3.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = s3.secretAccessKey;
    const bucket = 'errand-memory';
    const admin = new S3Client({ endpoint: s3.endpoint, region: s3.region, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }, forcePathStyle: true });
    await admin.send(new CreateBucketCommand({ Bucket: bucket }));
    // An operator's S3 source store with a skill of its own.
    await admin.send(new PutObjectCommand({ Bucket: bucket, Key: 'stores/team/.claude/skills/s3-style/SKILL.md', Body: '---\nname: s3-style\n---\nWrite short reviews.\n' }));
    admin.destroy();
    env = { ERRAND_BLOB_BUCKET: bucket, ERRAND_BLOB_PREFIX: 'errand/', ERRAND_BLOB_S3_ENDPOINT: s3.endpoint, ERRAND_BLOB_S3_REGION: s3.region, ERRAND_BLOB_S3_FORCE_PATH_STYLE: 'true' };
  }, 120_000);

  const first = memoryWorker('memory-s3-a', () => env);
  const second = memoryWorker('memory-s3-b', () => env);

  test('a memory written through one worker is in the system prompt of a delegation on another', async () => {
    expect(first.dataDir).not.toBe(second.dataDir);
    const { firstSystem, secondSystem } = await twoDelegations('s3', first, second);
    expect(firstSystem).toContain('memory/MEMORY.md is empty or does not exist yet.');
    expect(secondSystem).toContain('- The team indents with tabs (s3).');
    // Nothing of the memory is on either worker's disk: it is in the bucket only.
    for (const dataDir of [first.dataDir, second.dataDir]) expect(readdirSync(dataDir).includes('blobs') ? readdirSync(join(dataDir, 'blobs')) : []).not.toContain('agent-memory');
  }, 120_000);

  test("a skill in an operator's S3 store is found by name; a missing one is not", async () => {
    if (!s3) throw new Error('no S3 server');
    const store = new S3Store({ bucket: 'errand-memory', prefix: 'stores/team/', endpoint: s3.endpoint, region: s3.region, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey }, forcePathStyle: true });
    const place = new StoreSkillPlace(store);
    expect(await findSkills(['s3-style'], [place], 'agents/x.md')).toEqual({ ok: true, skills: [{ name: 's3-style', from: place.label, content: '---\nname: s3-style\n---\nWrite short reviews.\n' }] });
    const missing = await findSkills(['absent'], [place], 'agents/x.md');
    expect(missing.ok).toBe(false);
    expect(!missing.ok && missing.message).toContain('agents/x.md: skills: no skill named "absent"');
  });
});
