// The sleep cycle when the model hangs or cuts off mid-night, and when the app closes mid-night:
// each recorded, nothing half-written, the next run finishes. Harness: testing/faults-harness.ts.
import { describe, expect, it } from 'vitest';
import { CLOSING } from './service.js';
import { copyDataDir, readTwice } from './testing/fixture.js';
import {
  WAIT_MS,
  scratchDir,
  within,
  model,
  routes,
  faultAt,
  openHost,
  closeHost,
  saveModel,
  finishes,
  sleepNow,
  runs,
  stepOf,
  outcome,
  withDb,
  fixture,
  SMALL_CONTEXT,
  useFaultsHarness,
} from './testing/faults-harness.js';
import { PATIENCE_MS } from '../testing/patience.js';

useFaultsHarness();

// ---- 4 & 5. The model failing mid-night; the app closing mid-night ----

describe('the model failing in the middle of a night', () => {
  it('a call that hangs times out, a connection cut mid-answer fails: each recorded, nothing half-written, the next night finishes', async () => {
    const dir = copyDataDir(fixture, scratchDir());
    // A short timeout for the hang (what part 1 is about); healthy calls get a patient one after.
    let host = await openHost(dir, { providerTimeoutMs: 800 });
    await saveModel(host, 'fake-faults', SMALL_CONTEXT);

    // 1. The first light-sleep call never answers.
    routes.set('fake-faults', faultAt('light-sleep', 1, { kind: 'hang' }).respond);
    expect(await sleepNow(host)).toMatchObject({ status: 'failed', error: 'light-sleep failed' });
    let [run] = await runs(host);
    expect(stepOf(run, 'light-sleep')).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/background model did not answer .*0 of 6 chunks were done/),
    });
    for (const step of ['snapshot', 'deep-sleep', 'dream', 'mood-trend', 'digest']) {
      expect(stepOf(run, step)).toMatchObject({ status: 'skipped', reason: 'needs light-sleep, which failed' });
    }
    let audit = (await host.api['sleep.audit']({ limit: 100 })).items;
    expect(audit.map((a) => [a.purpose, a.status])).toEqual([['light-sleep', 'error']]);
    expect(audit[0]!.error).toMatch(/stopped answering \(nothing for 0\.8 s\)/);
    expect(await outcome(host)).toEqual({ diary: [], memories: [], dreams: [], proposals: [] });
    expect((await host.api['sleep.status']({})).running).toBeNull();

    await closeHost(host);
    host = await openHost(dir, { providerTimeoutMs: PATIENCE_MS });

    // 2. The third call is cut off mid-answer: the two before it are kept, nothing of the third.
    routes.set('fake-faults', faultAt('light-sleep', 3, { kind: 'cut', text: '{"memories": [{"type": "world", "content": "Mara' }).respond);
    expect(await sleepNow(host)).toMatchObject({ status: 'failed', error: 'light-sleep failed' });
    [run] = await runs(host);
    expect(stepOf(run, 'light-sleep')).toMatchObject({ status: 'failed', error: expect.stringMatching(/2 of 6 chunks were done/) });
    audit = (await host.api['sleep.audit']({ limit: 100 })).items.filter((a) => a.runId === run!.id);
    expect(audit.map((a) => a.status).reverse()).toEqual(['ok', 'ok', 'error']);
    expect(audit[0]!.error).toMatch(/ended before the reply was complete/);
    expect((await outcome(host)).diary.filter((l) => l.startsWith('anchor '))).toHaveLength(2);

    // 3. The model behaves: the next night reads the four chunks left, and only those.
    routes.set('fake-faults', model);
    expect(await sleepNow(host)).toMatchObject({ status: 'done', error: null });
    [run] = await runs(host);
    expect(stepOf(run, 'light-sleep')?.stats).toMatchObject({ calls: 4, chunks_done: 4 });
    expect((await outcome(host)).diary.filter((l) => l.startsWith('anchor '))).toHaveLength(6);
    await closeHost(host);
    await withDb(dir, async (db) => expect(await readTwice(db)).toEqual([]));
  });
});

describe('the app closing in the middle of a night', () => {
  it('host.close() stops the cycle at once, recorded as stopped; the next start resumes it', async () => {
    const dir = copyDataDir(fixture, scratchDir());
    let host = await openHost(dir);
    await saveModel(host, 'fake-closing', SMALL_CONTEXT);
    const fault = faultAt('light-sleep', 3, { kind: 'hang' });
    routes.set('fake-closing', fault.respond);
    const events = finishes(host);
    const { runId } = await host.api['sleep.now']({});
    await within(fault.reached, WAIT_MS, 'the third light-sleep call');
    // The hanging call is cancelled, not waited for (the provider's own timeout is a minute).
    await within(closeHost(host), 10_000, 'the host to close');
    expect(await events.of(runId!)).toMatchObject({ status: 'stopped', error: CLOSING });

    routes.set('fake-closing', model);
    host = await openHost(dir);
    const [stopped] = await runs(host);
    expect(stopped).toMatchObject({ id: runId, status: 'stopped', error: CLOSING });
    expect(stepOf(stopped, 'memory-ref-sync')).toMatchObject({ status: 'done' });
    expect(stepOf(stopped, 'light-sleep')).toMatchObject({ status: 'stopped', error: CLOSING });
    expect(stepOf(stopped, 'digest')).toMatchObject({ status: 'skipped', reason: `not run: ${CLOSING}` });
    expect((await host.api['sleep.status']({})).running).toBeNull();
    expect((await host.api['diary.days']({ limit: 30 })).flatMap((d) => d.anchors)).toHaveLength(2);
    // The cancelled call is in the audit log as what it was.
    const audit = (await host.api['sleep.audit']({ limit: 100 })).items.filter((a) => a.runId === runId);
    expect(audit.map((a) => [a.status, a.error]).reverse()).toEqual([
      ['ok', null],
      ['ok', null],
      ['error', 'The request was stopped.'],
    ]);

    expect(await sleepNow(host)).toMatchObject({ status: 'done', error: null });
    const [run] = await runs(host);
    expect(stepOf(run, 'memory-ref-sync')).toMatchObject({ status: 'done', reason: `done in run ${runId}` });
    expect(stepOf(run, 'light-sleep')?.stats).toMatchObject({ calls: 4, chunks_done: 4 });
    expect((await host.api['diary.days']({ limit: 30 })).flatMap((d) => d.anchors)).toHaveLength(6);
  });
});
