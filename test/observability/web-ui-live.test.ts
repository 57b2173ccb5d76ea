import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { readLiveText } from '../../src/observability/live-text-reader';
import { createScriptedModel } from '../../src/llm/scripted-model';
import { chromiumArguments, ensureChromium, freshProfileDirectory } from '../support/chromium';
import { until } from '../support/run-harness';
import { subagentInput } from '../support/temporal';
import { useWorkerStack } from '../support/worker-stack';

/**
 * The Temporal Web UI shows what a subagent's model is writing: the pending model call's heartbeat details
 * (`partialText`, `chars`, `turn`), in a real headless Chromium against the run's dev server. The model is
 * the in-process scripted model, streaming slowly.
 */

const projectRoot = resolve(__dirname, '..', '..');
const artifacts = join(projectRoot, 'test-artifacts');
const uiTimeoutMs = 30_000;
/** Numbered words, so the text on the page can be matched to the text written. */
const text = Array.from({ length: 150 }, (_, index) => `tide${index + 1}`).join(' ');

// A neutral worker identity: the pending activity card shows it (and the docs picture is taken of it).
const stack = useWorkerStack({ label: 'web-ui-live', identity: 'errand-worker-1', scripted: { scripted: { model: createScriptedModel([{ text, chunkDelayMs: 150 }]) } } });
let browser: BrowserContext;
let page: Page;
let workflowId: string;

function uiUrl(): string {
  const url = process.env.ERRAND_TEST_TEMPORAL_UI_URL;
  if (!url) throw new Error('ERRAND_TEST_TEMPORAL_UI_URL is not set: run tests through vitest (global setup starts the dev server with its Web UI)');
  return url;
}

/** With ERRAND_UPDATE_DOCS_IMAGES=1, saves the pending activity card as docs/images/<name> (kept small). */
async function saveDocsImage(name: string): Promise<void> {
  if (process.env.ERRAND_UPDATE_DOCS_IMAGES !== '1') return;
  const folder = join(projectRoot, 'docs', 'images');
  mkdirSync(folder, { recursive: true });
  const card = page.getByText('Heartbeat Details').first();
  const box = await card.boundingBox();
  const top = Math.max(0, Math.round((box?.y ?? 330) - 60));
  await page.screenshot({ path: join(folder, name), clip: { x: 280, y: top, width: 1130, height: 400 } });
  expect(statSync(join(folder, name)).size).toBeLessThan(200 * 1024);
}

/** The text of the page and its frames. */
async function pageText(target: Page): Promise<string> {
  const texts = await Promise.all(target.frames().map((frame) => frame.locator('body').innerText({ timeout: 1_000 }).catch(() => '')));
  return texts.join('\n');
}

beforeAll(async () => {
  const executablePath = await ensureChromium();
  workflowId = `errand-ui-live-${Date.now().toString(36)}`;
  await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId, args: [subagentInput({ prompt: 'Write about the tide', workingDir: stack.workingDir })] });
  mkdirSync(artifacts, { recursive: true });
  browser = await chromium.launchPersistentContext(freshProfileDirectory(), { executablePath, headless: true, args: chromiumArguments(), viewport: { width: 1440, height: 1000 } });
  page = await browser.newPage();
}, 600_000); // a first run may install Chromium

afterEach(async (context) => {
  if (context.task.result?.state !== 'fail' || !page) return;
  await page.screenshot({ path: join(artifacts, 'web-ui-live-failed.png'), fullPage: true }).catch(() => undefined);
  writeFileSync(join(artifacts, 'web-ui-live-failed.txt'), `${page.url()}\n\n${await pageText(page).catch(() => '')}`);
});

afterAll(async () => {
  await browser?.close();
  if (workflowId) await stack.client.workflow.getHandle(workflowId).cancel().catch(() => undefined);
});

describe('the Temporal Web UI while a model writes', () => {
  test('shows the pending model call with the text written so far as its heartbeat details', async () => {
    // The details exist before the page is opened, so the page shows them on its first load.
    await until(() => readLiveText(stack.client, workflowId), (live) => (live?.chars ?? 0) > 0, 'the model to write', 20_000);
    const runId = (await stack.client.workflow.getHandle(workflowId).describe()).runId;
    await page.goto(`${uiUrl()}/namespaces/default/workflows/${encodeURIComponent(workflowId)}/${runId}/pending-activities`, { waitUntil: 'domcontentloaded' });

    const deadline = Date.now() + uiTimeoutMs;
    let shown = '';
    while (Date.now() < deadline) {
      shown = await pageText(page);
      if (/partialText/.test(shown) && /tide1 tide2/.test(shown)) break;
      await page.waitForTimeout(500);
    }
    await page.screenshot({ path: join(artifacts, 'web-ui-live.png') });
    await saveDocsImage('web-ui-live-output.png');

    expect(shown).toContain('modelTurn');
    expect(shown).toContain('partialText');
    expect(shown).toMatch(/tide1 tide2 tide3/);
    const words = /"partialText":\s*"([^"]*)"/.exec(shown.replace(/\s*\n\s*/g, ' '))?.[1] ?? /tide1 tide2[ a-z0-9]*/.exec(shown)?.[0] ?? '';
    expect(text.startsWith(words.trim())).toBe(true);
  });
});
