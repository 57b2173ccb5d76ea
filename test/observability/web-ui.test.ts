import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { chromiumArguments, ensureChromium, freshProfileDirectory } from '../support/chromium';
import { useWorkerStack } from '../support/worker-stack';
import { createSessionModel, runSessionWithTwoChildren, sessionWorkingDir, type SessionRun } from './session-scenario';

/**
 * The Temporal Web UI of the run's dev server, in a real (headless) Chromium: a session with two children
 * is listed with errand's search attributes as columns, its timeline names the children and model calls
 * by their summaries, and its relationships lead to a child whose page shows the child's own summary.
 *
 * Screenshots go to test-artifacts/ (git-ignored). With ERRAND_UPDATE_DOCS_IMAGES=1 the session's
 * timeline is also saved as docs/images/web-ui.png (kept out of ordinary runs so tests leave the work
 * tree clean).
 */

const projectRoot = resolve(__dirname, '..', '..');
const artifacts = join(projectRoot, 'test-artifacts');
/** How long the UI may take to show something (it polls the server; visibility lags a little). */
const uiTimeoutMs = 20_000;

const stack = useWorkerStack({ label: 'observability-ui', scripted: { scripted: { model: createSessionModel() } } });
let run: SessionRun;
let browser: BrowserContext;
let page: Page;

function uiUrl(): string {
  const url = process.env.ERRAND_TEST_TEMPORAL_UI_URL;
  if (!url) throw new Error('ERRAND_TEST_TEMPORAL_UI_URL is not set: run tests through vitest (global setup starts the dev server with its Web UI)');
  return url;
}

/** Waits until `locator` is visible and returns its text. */
async function visibleText(locator: Locator): Promise<string> {
  await locator.waitFor({ state: 'visible', timeout: uiTimeoutMs });
  return (await locator.textContent()) ?? '';
}

/** With ERRAND_UPDATE_DOCS_IMAGES=1, saves part of the view as docs/images/<name> (kept small). */
async function saveDocsImage(name: string, clip: { x: number; y: number; width: number; height: number }): Promise<void> {
  if (process.env.ERRAND_UPDATE_DOCS_IMAGES !== '1') return;
  const folder = join(projectRoot, 'docs', 'images');
  mkdirSync(folder, { recursive: true });
  await page.screenshot({ path: join(folder, name), clip });
  expect(statSync(join(folder, name)).size).toBeLessThan(200 * 1024);
}

/**
 * Waits until `text` is on the page or in one of its frames (the UI renders summaries and details as
 * Markdown inside frames, and long lists beyond the visible area, so text is searched, not clicked).
 */
async function waitForText(target: Page, text: string): Promise<void> {
  const deadline = Date.now() + uiTimeoutMs;
  while (Date.now() < deadline) {
    for (const frame of target.frames()) {
      const body = await frame.locator('body').innerText({ timeout: 1_000 }).catch(() => '');
      if (body.includes(text)) return;
    }
    await target.waitForTimeout(250);
  }
  throw new Error(`the page ${target.url()} did not show "${text}" within ${uiTimeoutMs} ms`);
}

beforeAll(async () => {
  const executablePath = await ensureChromium();
  run = await runSessionWithTwoChildren(stack.client, {
    taskQueue: stack.taskQueue,
    workflowId: `errand-ui-${Date.now().toString(36)}`,
    workingDir: sessionWorkingDir(),
    tenant: 'acme',
  });
  mkdirSync(artifacts, { recursive: true });
  browser = await chromium.launchPersistentContext(freshProfileDirectory(), {
    executablePath,
    headless: true,
    args: chromiumArguments(),
    viewport: { width: 1440, height: 860 },
  });
  page = await browser.newPage();
}, 600_000); // a first run may install Chromium

// On failure keep what the browser saw, so a UI change can be diagnosed without rerunning.
afterEach(async (context) => {
  if (context.task.result?.state !== 'fail' || !page) return;
  const name = context.task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60);
  await page.screenshot({ path: join(artifacts, `web-ui-failed-${name}.png`), fullPage: true }).catch(() => undefined);
  writeFileSync(join(artifacts, `web-ui-failed-${name}.txt`), `${page.url()}\n\n${await page.locator('body').innerText().catch(() => '')}`);
});

afterAll(async () => {
  await browser?.close();
  await run?.handle.cancel().catch(() => undefined);
});

describe('the Temporal Web UI', () => {
  test('the workflow list shows the session and its children with errand search attributes as columns', async () => {
    const query = `WorkflowId = '${run.sessionId}' OR ErrandParent = '${run.sessionId}'`;
    await page.goto(`${uiUrl()}/namespaces/default/workflows?query=${encodeURIComponent(query)}`, { waitUntil: 'domcontentloaded' });
    // Columns are a per-browser setting: swap Run ID, Start and End for errand's search attributes.
    await page.getByTestId('workflows-summary-table-configuration-button').click();
    for (const column of ['Run ID', 'Start', 'End']) await page.getByTestId(`orderable-list-item-${column}-remove-button`).click();
    for (const column of ['ErrandKind', 'ErrandParent', 'ErrandStatus', 'ErrandTurns']) await page.getByTestId(`orderable-list-item-${column}-add-button`).click();
    await page.getByTestId('drawer-close-button').click();

    const rows = page.locator('table tbody tr');
    const row = (workflowId: string) => rows.filter({ has: page.getByRole('link', { name: workflowId, exact: true }) });
    const session = await visibleText(row(run.sessionId));
    expect(session).toContain('sessionWorkflow');
    expect(session).toContain('session');
    expect(session).toContain('waiting');
    for (const childId of run.childIds) {
      const child = await visibleText(row(childId));
      expect(child).toContain('subagentWorkflow');
      expect(child).toContain('subagent');
      expect(child).toContain(run.sessionId);
      expect(child).toContain('completed');
    }
    expect(await rows.count()).toBe(3);
    await page.screenshot({ path: join(artifacts, 'web-ui-list.png') });
    await saveDocsImage('web-ui-list.png', { x: 256, y: 48, width: 1184, height: 380 });
  });

  test('opening the session shows its children and model calls by their summaries', async () => {
    await page.getByRole('link', { name: run.sessionId, exact: true }).first().click();
    await page.waitForURL(new RegExp(`/workflows/${run.sessionId}/`), { timeout: uiTimeoutMs });

    // The timeline draws the children as bars labelled with their summaries (a picture for the docs).
    await page.getByText('survey the working folder', { exact: true }).first().waitFor({ timeout: uiTimeoutMs });
    // Picture: from the Timeline heading down, tall enough for every row of this short history.
    await page.setViewportSize({ width: 1440, height: 1400 });
    const heading = page.getByRole('heading', { name: 'Timeline' }).first();
    await heading.scrollIntoViewIfNeeded();
    await page.waitForTimeout(500);
    await page.screenshot({ path: join(artifacts, 'web-ui-session.png') });
    const top = Math.max(48, Math.round(((await heading.boundingBox())?.y ?? 48) - 16));
    await saveDocsImage('web-ui.png', { x: 256, y: top, width: 1184, height: Math.min(560, 1400 - top) });
    await page.setViewportSize({ width: 1440, height: 860 });

    // Event History lists every event with its summary (the timeline hides labels that do not fit).
    await page.getByRole('tab', { name: /^Event History/ }).click();
    for (const text of ['survey the working folder', 'check for open issues', 'model scripted/scripted-model · turn 1', 'model scripted/scripted-model · turn 2']) {
      await waitForText(page, text);
    }

    // Relationships: the session's two children, linked.
    await page.getByRole('tab', { name: /^Relationships/ }).click();
    for (const childId of run.childIds) await page.getByRole('link', { name: childId, exact: true }).first().waitFor({ timeout: uiTimeoutMs });

    // User Metadata: the static summary and details set at start (rendered as Markdown in a frame).
    await page.getByRole('tab', { name: /^User Metadata/ }).click();
    await waitForText(page, 'session · release check — You coordinate release checks by delegating them to subagents.');
    await waitForText(page, 'scripted/scripted-model');
  });

  test('a child opened from the session shows its summary, model calls and tool call', async () => {
    await page.getByRole('tab', { name: /^Relationships/ }).click();
    await page.getByRole('link', { name: run.childIds[0], exact: true }).first().click();
    await page.waitForURL((url) => decodeURIComponent(url.pathname).includes(`/workflows/${run.childIds[0]}/`), { timeout: uiTimeoutMs });
    await page.getByRole('tab', { name: /^Event History/ }).click();
    await waitForText(page, 'tool developer__list_directory');
    await waitForText(page, 'model scripted/scripted-model · turn 2');
    await page.screenshot({ path: join(artifacts, 'web-ui-child.png') });
    await page.getByRole('tab', { name: /^User Metadata/ }).click();
    await waitForText(page, 'survey the working folder');
    await waitForText(page, `parent: ${run.sessionId}`);
  });
});
