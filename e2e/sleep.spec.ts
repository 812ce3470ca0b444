// A night's sleep, as a person sees it: the real app in browser mode on a data folder seeded with
// conversations over three past days, the fake model answering every sleep prompt with schema-valid
// JSON (e2e/fake-llm/sleep-responder.ts), and Chromium driving the Sleep, Diary and Dreams views —
// a run in progress, the finished night as a DAG, the morning digest with undo, the audit log, the
// diary by day with its mood chart, search and hide-with-undo, and the dreams — and a night the
// background model answers in prose, which shows failed with why, and says so in the Diary and Dreams.
import fs from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { startFakeLlm, type FakeLlm } from './fake-llm/server.js';
import { findTask, sleepResponder } from './fake-llm/sleep-responder.js';
import { callApi, newDataDir, seedConversations, shot, startApp, type RunningApp } from './app.js';

/** A LoCoMo conversation beside the repository (see ../shared/bench/locomo/README.md). */
const FIXTURE = path.resolve('..', 'shared', 'bench', 'locomo', 'dev', '26.json');
const SESSIONS = 3;

let fake: FakeLlm;
let app: RunningApp | null = null;

test.beforeAll(async () => {
  fake = await startFakeLlm();
});
test.afterAll(async () => {
  await fake.close();
});
test.afterEach(async () => {
  fake.respond = undefined;
  await app?.stop('SIGTERM');
  app = null;
});

async function seededApp(): Promise<RunningApp> {
  const dataDir = newDataDir();
  const seeded = seedConversations(dataDir, { fixture: FIXTURE, sessions: SESSIONS, turns: 10 });
  expect(seeded).toHaveLength(SESSIONS);
  app = await startApp(dataDir);
  await callApi(app, 'providers.save', { kind: 'openai-compatible', name: 'Fake', baseUrl: fake.baseUrl, model: 'fake-model' });
  // Automatic sleep off: the catch-up at launch must not start a night before the test does.
  await callApi(app, 'settings.update', { onboarded: true, sleep: { auto: false } });
  return app;
}

const latestRun = (page: Page) => page.getByTestId('sleep-run').first();

test('a night’s sleep: progress, the night as steps, the digest with undo, and the audit log', async ({ page }) => {
  test.skip(!fs.existsSync(FIXTURE), `needs the LoCoMo fixture at ${FIXTURE}`);
  test.setTimeout(240_000);
  const a = await seededApp();
  // Slow answers keep the night running long enough to be seen (and photographed) in progress.
  fake.respond = sleepResponder({ delayMs: 1500 });

  await page.goto(a.url);
  await page.getByTestId('nav-sleep').click();
  await expect(page.getByTestId('view-sleep')).toBeVisible();
  await expect(page.getByTestId('sleep-next')).toBeVisible();
  await expect(page.getByTestId('sleep-now')).toBeEnabled();
  await expect(page.getByTestId('budget-calls')).toContainText(/0 of \d+/);

  // Before the first night the Diary says honestly what will fill it, and offers to sleep now —
  // which starts the night and shows it in the Sleep view.
  await page.getByTestId('nav-diary').click();
  await expect(page.getByTestId('diary-empty')).toBeVisible();
  await page.getByTestId('diary-sleep-now').click();
  await expect(page.getByTestId('view-sleep')).toBeVisible();

  // In progress: the bar with numbers, Stop, and the night's steps with one running.
  const progress = page.getByTestId('sleep-progress');
  await expect(progress).toBeVisible();
  await expect(progress).toContainText(/\d+ of \d+/);
  await expect(page.getByTestId('sleep-stop')).toBeEnabled();
  await expect(latestRun(page)).toHaveAttribute('data-status', 'running');
  await expect(latestRun(page).locator('[data-testid="sleep-step"][data-status="running"]')).toHaveCount(1);
  await shot(page, 'sleep-sleep-running');

  // The night ends (sleep.finished): every step done or skipped with its reason, the digest written.
  await expect(latestRun(page)).toHaveAttribute('data-status', 'done', { timeout: 180_000 });
  await expect(progress).toHaveCount(0);
  const steps = latestRun(page).getByTestId('sleep-step');
  await expect(steps).toHaveCount(7);
  for (const id of ['memory-ref-sync', 'light-sleep', 'snapshot', 'deep-sleep', 'dream', 'mood-trend', 'digest']) {
    await expect(latestRun(page).locator(`[data-testid="sleep-step"][data-step="${id}"]`)).toHaveAttribute('data-status', /^(done|skipped)$/);
  }
  await expect(latestRun(page).locator('[data-step="light-sleep"]')).toHaveAttribute('data-status', 'done');
  const status = await callApi(a, 'sleep.status');
  expect(status.running).toBeNull();
  expect(status.budget.calls).toBeGreaterThan(0);

  // The morning digest: what light sleep saved, each with undo.
  const digest = page.getByTestId('digest');
  await expect(digest.getByTestId('digest-summary')).not.toBeEmpty();
  const items = digest.getByTestId('digest-item');
  await expect(items.first()).toBeVisible();
  const first = items.first();
  const memoryId = Number(await first.getAttribute('data-memory-id'));
  await expect(first).toHaveAttribute('data-undone', 'false');
  await first.getByTestId('digest-undo').click();
  await expect(first).toHaveAttribute('data-undone', 'true');
  await expect(first.getByTestId('digest-undone')).toBeVisible();
  // Undoing what the night saved takes the memory out of what is remembered.
  const undone = await callApi(a, 'memories.get', { id: memoryId });
  expect(undone.memory.status).not.toBe('active');

  // The audit log: one row per background call; a row opens the call's prompt and response.
  const rows = page.getByTestId('audit-row');
  await expect(rows.first()).toBeVisible();
  const audit = await callApi(a, 'sleep.audit', {});
  expect(audit.total).toBeGreaterThan(0);
  await page.getByTestId('audit-filter').getByRole('button', { name: 'Succeeded' }).click();
  await expect(page.getByTestId('audit-filter')).toHaveAttribute('data-value', 'ok');
  await expect(rows.first()).toHaveAttribute('data-status', 'ok');
  await rows.first().click();
  const detail = page.getByTestId('audit-detail');
  await expect(detail).toBeVisible();
  await expect(detail.getByTestId('audit-prompt')).toContainText('Task: ');
  await expect(detail.getByTestId('audit-response')).toContainText('{');
  await shot(page, 'sleep-audit');
  await page.keyboard.press('Escape');
  await expect(detail).toHaveCount(0);
  await latestRun(page).scrollIntoViewIfNeeded();
  await shot(page, 'sleep-night');
});

test('the diary by day with its mood chart, search and hide-with-undo; the dreams as a book', async ({ page }) => {
  test.skip(!fs.existsSync(FIXTURE), `needs the LoCoMo fixture at ${FIXTURE}`);
  test.setTimeout(240_000);
  const a = await seededApp();
  fake.respond = sleepResponder();
  const started = await callApi(a, 'sleep.now');
  expect(started.runId).not.toBeNull();
  await expect.poll(async () => (await callApi(a, 'sleep.status')).running, { timeout: 180_000 }).toBeNull();
  const [run] = await callApi(a, 'sleep.runs', { limit: 1 });
  expect(run.status).toBe('done');

  // What the responder wrote, as the host stores it: the test checks the page shows exactly that.
  const days: { day: string; anchors: { id: number; body: string }[]; imprints: { id: number; body: string }[]; narratives: { title: string }[] }[] =
    await callApi(a, 'diary.days', {});
  expect(days.length).toBeGreaterThanOrEqual(2);
  const newest = days[0]!;
  const anchor = newest.anchors[0]!;
  expect(anchor).toBeTruthy();

  await page.goto(a.url);
  await page.getByTestId('nav-diary').click();
  const dayEls = page.getByTestId('diary-day');
  await expect(dayEls).toHaveCount(days.length);
  await expect(dayEls.first()).toHaveAttribute('data-day', newest.day);
  const newestEl = page.locator(`[data-testid="diary-day"][data-day="${newest.day}"]`);
  await expect(newestEl).toContainText(anchor.body);
  if (newest.narratives[0]) await expect(newestEl).toContainText(newest.narratives[0].title);
  const chart = page.getByTestId('mood-chart');
  await expect(chart).toBeVisible();
  await expect(chart.locator('svg[role="img"]')).toHaveAttribute('aria-label', /\S/);
  await expect(chart.locator('circle.mood-dot')).toHaveCount(Math.min(7, (await callApi(a, 'diary.mood', { days: 30 })).length));
  await shot(page, 'diary');
  await page.getByTestId('mood-range-30').click();
  await expect(chart).toHaveAttribute('data-range', '30');

  // Hide a feeling: it leaves the page at once; Undo in the toast brings it back.
  const block = newestEl.locator(`[data-testid="diary-block"][data-id="${anchor.id}"]`);
  await block.hover();
  await block.getByTestId('diary-hide').click();
  await expect(block).toHaveCount(0);
  await expect(page.getByTestId('toast')).toBeVisible();
  const hidden = await callApi(a, 'diary.days', {});
  expect(JSON.stringify(hidden)).not.toContain(`"id":${anchor.id},`);
  await page.getByTestId('toast-action').click();
  await expect(block).toHaveCount(1);
  await expect(block).toContainText(anchor.body);

  // Search goes through the companion's own recall of what it felt and wrote.
  const word = anchor.body
    .split(/\s+/)
    .find((w) => w.replace(/\W/g, '').length >= 5)!
    .replace(/\W/g, '');
  await page.getByTestId('diary-search').fill(word);
  const hit = page.getByTestId('diary-hit').first();
  await expect(hit).toBeVisible();
  const hitDay = await hit.getAttribute('data-day');
  await hit.click();
  await expect(page.getByTestId('diary-search')).toHaveValue('');
  await expect(page.locator(`[data-testid="diary-day"][data-day="${hitDay}"]`)).toBeInViewport();

  // Dreams: a list of dates and titles; one opens as a page, which never claims it happened.
  const dreams: { id: number; title: string | null; body: string }[] = await callApi(a, 'dreams.list', {});
  expect(dreams.length).toBeGreaterThan(0);
  await page.getByTestId('nav-dreams').click();
  const items = page.getByTestId('dream-item');
  await expect(items).toHaveCount(dreams.length);
  await shot(page, 'dreams-list');
  await items.first().focus();
  await page.keyboard.press('Enter');
  const reader = page.getByTestId('dream-reader');
  await expect(reader).toBeVisible();
  await expect(reader).toContainText(dreams[0]!.body.split('\n')[0]!.slice(0, 40));
  await expect(reader.getByTestId('dream-note')).toBeVisible();
  await shot(page, 'dreams');
  await page.keyboard.press('Escape');
  await expect(reader).toHaveCount(0);
  await expect(items.first()).toBeFocused();

  // Both themes look deliberate.
  await callApi(a, 'settings.update', { theme: 'dark' });
  await page.getByTestId('nav-diary').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect(page.getByTestId('diary-day').first()).toBeVisible();
  await expect(page.getByTestId('mood-chart').locator('circle.mood-dot').first()).toBeVisible();
  // Coming back to the Diary starts at the top, not at the day a search led to earlier.
  await expect(page.getByTestId('mood-chart')).toBeInViewport();
  await shot(page, 'diary-dark');
  await page.getByTestId('nav-sleep').click();
  await expect(page.getByTestId('digest-summary')).toBeVisible();
  await expect(page.getByTestId('sleep-step').first()).toBeVisible();
  await expect(page.getByTestId('audit-row').first()).toBeVisible();
  await shot(page, 'sleep-dark');
});

test('a night the background model answers in prose: failed in the Sleep view with why, the calls and try again; the Diary and Dreams say so', async ({
  page,
}) => {
  test.skip(!fs.existsSync(FIXTURE), `needs the LoCoMo fixture at ${FIXTURE}`);
  test.setTimeout(240_000);
  const a = await seededApp();
  // A chatty model too small for the task: friendly prose, never the JSON asked for.
  fake.respond = async (body) =>
    findTask(body)
      ? {
          kind: 'text',
          text: 'Sure! Here is a short summary of the conversations: they talked about painting and family. Let me know if you need more!',
          chunks: 4,
        }
      : undefined;

  await page.goto(a.url);
  await page.getByTestId('nav-sleep').click();
  await page.getByTestId('sleep-now').click();
  const run = latestRun(page);
  await expect(run).toHaveAttribute('data-status', 'failed', { timeout: 180_000 });
  const light = run.locator('[data-testid="sleep-step"][data-step="light-sleep"]');
  await expect(light).toHaveAttribute('data-status', 'failed');
  const note = light.getByTestId('step-failed-note');
  await expect(note).toHaveAttribute('data-kind', 'unusable');
  await expect(note).toContainText('didn’t answer in the form I need — it may be too small for this');
  for (const id of ['snapshot', 'deep-sleep', 'dream', 'mood-trend', 'digest']) {
    await expect(run.locator(`[data-testid="sleep-step"][data-step="${id}"]`)).toHaveAttribute('data-status', 'skipped');
  }
  expect((await callApi(a, 'sleep.status')).lastRun.status).toBe('failed');
  await light.scrollIntoViewIfNeeded();
  await shot(page, 'sleep-failed');

  // "See the calls": the audit log, showing the unusable answers.
  await note.getByTestId('see-calls').click();
  await expect(page.getByTestId('audit-filter')).toHaveAttribute('data-value', 'invalid');
  await expect(page.getByTestId('audit-row').first()).toHaveAttribute('data-status', 'invalid');

  // The Diary and Dreams are empty, and say why, with the way to Sleep.
  await page.getByTestId('nav-diary').click();
  const diaryWhy = page.getByTestId('diary-night-failed');
  await expect(diaryWhy).toContainText('Last night didn’t work');
  await expect(diaryWhy).toContainText('didn’t answer in the form I need');
  await shot(page, 'diary-after-failed-night');
  await page.getByTestId('nav-dreams').click();
  await expect(page.getByTestId('dreams-night-failed')).toContainText('Last night didn’t work');

  // In Chinese and the dark theme too.
  await callApi(a, 'settings.update', { language: 'zh-CN', theme: 'dark' });
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect(page.getByTestId('dreams-night-failed')).toContainText('昨晚的睡眠没有成功');
  await shot(page, 'dreams-after-failed-night-zh-dark');
  await page.getByTestId('dreams-night-failed-open-sleep').click();
  await expect(page.getByTestId('view-sleep')).toBeVisible();
  await expect(latestRun(page).getByTestId('step-failed-note')).toContainText('后台模型没有按我需要的格式回答');
  await latestRun(page).locator('[data-step="light-sleep"]').scrollIntoViewIfNeeded();
  await shot(page, 'sleep-failed-zh-dark');

  // Try again, with a model that answers properly: the same day finishes, and the Diary fills.
  await callApi(a, 'settings.update', { language: 'en', theme: 'light' });
  fake.respond = sleepResponder();
  await latestRun(page).getByTestId('sleep-try-again').click();
  await expect(latestRun(page)).toHaveAttribute('data-status', 'done', { timeout: 180_000 });
  await page.getByTestId('nav-diary').click();
  await expect(page.getByTestId('diary-day').first()).toBeVisible();
  await expect(page.getByTestId('diary-night-failed')).toHaveCount(0);
});
