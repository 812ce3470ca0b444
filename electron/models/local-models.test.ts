// On-device models through the real host: the catalogue with install state, downloads from the
// loopback fake model host (electron/models/testing/model-host.ts) serving the generated tiny models,
// progress events, cancel and resume, delete, the embedding choice, errors in words, and the two
// settings (model host, embedding model) with their validation.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ApiEvents, LocalModel, ModelDownloadProgress } from '../../shared/api.js';
import { openDatabase } from '../db/open.js';
import { TEST_CHAT_MODEL_ID, TEST_MODEL_ID } from './catalog.js';
import { FakeModelHost } from './testing/model-host.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';
import { createHost, type HostModelOptions } from '../host/index.js';
import { PROGRESS_EVENT_MS } from './local-models.js';
import type { Host, HostOptions } from '../host/types.js';
import { rejection } from '../testing/rejection.js';

const SERVED = fileURLToPath(new URL('./testing/models', import.meta.url));
const WEIGHTS = 'onnx/model.onnx';
const weightsSize = fs.statSync(path.join(SERVED, ...TEST_MODEL_ID.split('/'), WEIGHTS)).size;

let modelHost: FakeModelHost;
beforeAll(async () => {
  modelHost = new FakeModelHost({ root: SERVED });
  await modelHost.start();
});
afterAll(async () => {
  await modelHost.close();
});

const hosts: Host[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  modelHost.clearFaults();
});

type Options = Partial<HostOptions> & HostModelOptions;

/** A host offering the test models, pointed at the fake model host, retrying fast. */
async function start(options: Options = {}): Promise<Host> {
  const host = await createHost({
    dataDir: options.dataDir ?? tempDataDir('anima-models-'),
    template: dbTemplate(),
    detectLocalServers: false,
    log: () => {},
    ...options,
    models: { includeTestModels: true, tuning: { retries: 1, retryDelayMs: 10 }, ...options.models },
  });
  hosts.push(host);
  await host.api['settings.update']({ models: { host: modelHost.url } });
  return host;
}

async function restart(host: Host, options: Options = {}): Promise<Host> {
  await host.close();
  hosts.splice(hosts.indexOf(host), 1);
  return start({ ...options, dataDir: host.dataDir });
}

/** Collects one event's payloads until stopped. */
function record<E extends keyof ApiEvents>(host: Host, name: E): { items: ApiEvents[E][]; at: number[]; stop: () => void } {
  const items: ApiEvents[E][] = [];
  const at: number[] = [];
  const stop = host.on((event, payload) => {
    if (event !== name) return;
    items.push(payload as ApiEvents[E]);
    at.push(performance.now());
  });
  return { items, at, stop };
}

/** The next models.changed whose entry for `id` passes `match`. */
function changed(host: Host, id: string, match: (model: LocalModel) => boolean, timeoutMs = PATIENCE_MS): Promise<LocalModel> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no matching models.changed for ${id} within ${timeoutMs} ms`));
    }, timeoutMs);
    const off = host.on((event, payload) => {
      if (event !== 'models.changed') return;
      const model = (payload as ApiEvents['models.changed']).models.find((m) => m.id === id);
      if (model && match(model)) {
        clearTimeout(timer);
        off();
        resolve(model);
      }
    });
  });
}

function progressPast(host: Host, id: string, bytes: number, timeoutMs = PATIENCE_MS): Promise<ModelDownloadProgress> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`the download of ${id} did not pass ${bytes} bytes within ${timeoutMs} ms`));
    }, timeoutMs);
    const off = host.on((event, payload) => {
      const p = payload as ModelDownloadProgress;
      if (event === 'models.progress' && p.id === id && p.phase === 'downloading' && p.bytesDone >= bytes) {
        clearTimeout(timer);
        off();
        resolve(p);
      }
    });
  });
}

async function model(host: Host, id: string): Promise<LocalModel> {
  const found = (await host.api['models.list']({})).find((m) => m.id === id);
  if (!found) throw new Error(`${id} is not listed`);
  return found;
}

describe('on-device models in the host', () => {
  it('lists the catalogue with nothing installed, and keeps test models out unless asked', async () => {
    const host = await start();
    const list = await host.api['models.list']({});
    expect(list.map((m) => m.id)).toEqual(
      expect.arrayContaining(['Xenova/multilingual-e5-small', 'onnx-community/Qwen2.5-0.5B-Instruct', TEST_MODEL_ID, TEST_CHAT_MODEL_ID]),
    );
    for (const m of list) {
      expect(m).toMatchObject({ state: 'available', installed: null, partialBytes: 0, progress: null, error: null });
      expect(m.usedBy).toEqual({ embeddings: false, providers: [] });
    }
    const e5 = list.find((m) => m.id === 'Xenova/multilingual-e5-small')!;
    expect(e5).toMatchObject({ task: 'embedding', licence: 'MIT', dimensions: 384, contextLength: null, testOnly: false });
    expect(e5.languages).toContain('zh');
    expect(list.find((m) => m.id === TEST_CHAT_MODEL_ID)).toMatchObject({ task: 'chat', testOnly: true, contextLength: 2048 });

    const plain = await start({ models: { includeTestModels: false } });
    const ids = (await plain.api['models.list']({})).map((m) => m.id);
    expect(ids).not.toContain(TEST_MODEL_ID);
    expect((await rejection(plain.api['models.download']({ id: TEST_MODEL_ID }))).code).toBe('model_not_found');
  });

  it('downloads with throttled progress events, installs, and still knows it after a restart', async () => {
    // ~4 s for the weights: long enough for a dozen progress events.
    modelHost.setFault(TEST_MODEL_ID, WEIGHTS, { bytesPerSecond: 40_000 });
    const host = await start();
    const progress = record(host, 'models.progress');
    const installed = changed(host, TEST_MODEL_ID, (m) => m.state === 'installed');
    const started = await host.api['models.download']({ id: TEST_MODEL_ID });
    expect(started.state).toBe('downloading');
    // A second click joins the running download.
    expect((await host.api['models.download']({ id: TEST_MODEL_ID })).state).toBe('downloading');
    const mid = await progressPast(host, TEST_MODEL_ID, 60_000);
    expect(mid.bytesTotal).toBeGreaterThan(weightsSize);
    const listed = await model(host, TEST_MODEL_ID);
    expect(listed.state).toBe('downloading');
    expect(listed.progress?.bytesDone).toBeGreaterThan(0);

    const done = await installed;
    progress.stop();
    expect(done.installed!.bytesOnDisk).toBeGreaterThanOrEqual(done.progress?.bytesTotal ?? weightsSize);
    expect(done.installed!.host).toBe(modelHost.url);
    expect(done).toMatchObject({ partialBytes: 0, error: null, progress: null });

    const phases = progress.items.map((p) => p.phase);
    expect(phases[0]).toBe('checking');
    expect(phases).toContain('installing');
    expect(phases.at(-1)).toBe('done');
    const downloading = progress.items.filter((p) => p.phase === 'downloading');
    expect(downloading.length).toBeGreaterThan(4);
    expect(downloading.some((p) => p.bytesPerSecond > 0 && p.secondsLeft !== null)).toBe(true);
    const bytes = downloading.map((p) => p.bytesDone);
    expect(bytes).toEqual([...bytes].sort((a, b) => a - b));
    // At most four a second: consecutive downloading events of the same model are ≥ 250 ms apart.
    const times = progress.items.map((p, i) => ({ p, t: progress.at[i]! })).filter(({ p }) => p.phase === 'downloading');
    for (let i = 1; i < times.length; i++) expect(times[i]!.t - times[i - 1]!.t).toBeGreaterThanOrEqual(PROGRESS_EVENT_MS - 5);

    // Downloading an installed model again fetches nothing.
    const requests = modelHost.requests.length;
    expect((await host.api['models.download']({ id: TEST_MODEL_ID })).state).toBe('installed');
    expect(modelHost.requests.length).toBe(requests);

    const again = await restart(host);
    expect(await model(again, TEST_MODEL_ID)).toMatchObject({ state: 'installed', installed: { bytesOnDisk: done.installed!.bytesOnDisk } });
  });

  it('stops a download keeping what arrived, resumes it with a Range request, and survives a restart in between', async () => {
    modelHost.setFault(TEST_MODEL_ID, WEIGHTS, { bytesPerSecond: 30_000 });
    const host = await start();
    await host.api['models.download']({ id: TEST_MODEL_ID });
    await progressPast(host, TEST_MODEL_ID, 40_000);
    const stoppedEvent = changed(host, TEST_MODEL_ID, (m) => m.state === 'partial');
    const stopped = await host.api['models.cancel']({ id: TEST_MODEL_ID });
    expect(stopped.state).toBe('partial');
    expect(stopped.partialBytes).toBeGreaterThan(20_000);
    expect(stopped.error).toBeNull(); // stopping is not a failure
    await stoppedEvent;
    // Cancelling what is not running changes nothing.
    expect((await host.api['models.cancel']({ id: TEST_MODEL_ID })).state).toBe('partial');

    const again = await restart(host);
    const waiting = await model(again, TEST_MODEL_ID);
    expect(waiting).toMatchObject({ state: 'partial', partialBytes: stopped.partialBytes });

    modelHost.setFault(TEST_MODEL_ID, WEIGHTS, undefined);
    modelHost.requests.length = 0;
    const installed = changed(again, TEST_MODEL_ID, (m) => m.state === 'installed');
    await again.api['models.download']({ id: TEST_MODEL_ID });
    await installed;
    const ranges = modelHost
      .requestsFor(TEST_MODEL_ID, WEIGHTS)
      .map((r) => r.range)
      .filter(Boolean);
    expect(ranges.length).toBeGreaterThan(0);
    expect(Number(/bytes=(\d+)-/.exec(ranges[0]!)![1])).toBeGreaterThan(0);
    expect((await model(again, TEST_MODEL_ID)).partialBytes).toBe(0);
  });

  it('closing the host stops downloads and keeps their partial files', async () => {
    modelHost.setFault(TEST_MODEL_ID, WEIGHTS, { bytesPerSecond: 30_000 });
    const host = await start();
    await host.api['models.download']({ id: TEST_MODEL_ID });
    await progressPast(host, TEST_MODEL_ID, 30_000);
    const again = await restart(host);
    // Stopped, not waited for: a close that let the download run to its end would find it installed.
    const waiting = await model(again, TEST_MODEL_ID);
    expect(waiting.state).toBe('partial');
    expect(waiting.partialBytes).toBeGreaterThan(0);
  });

  it('uses an installed embedding model for memory search, and deleting it un-selects it', async () => {
    const host = await start();
    const notInstalled = await rejection(host.api['models.useForEmbeddings']({ id: TEST_MODEL_ID }));
    expect(notInstalled.code).toBe('model_not_installed');
    const viaSettings = await rejection(host.api['settings.update']({ models: { embedding: TEST_MODEL_ID } }));
    expect(viaSettings).toMatchObject({ code: 'model_not_installed', field: 'models.embedding' });

    const installed = changed(host, TEST_MODEL_ID, (m) => m.state === 'installed');
    await host.api['models.download']({ id: TEST_MODEL_ID });
    await installed;
    const chosen = changed(host, TEST_MODEL_ID, (m) => m.usedBy.embeddings);
    const settings = await host.api['models.useForEmbeddings']({ id: TEST_MODEL_ID });
    expect(settings.models).toEqual({ host: modelHost.url, embedding: TEST_MODEL_ID, serverEmbedding: null });
    await chosen;
    expect((await model(host, TEST_MODEL_ID)).usedBy.embeddings).toBe(true);

    const settingsEvents = record(host, 'settings.changed');
    const removed = await host.api['models.delete']({ id: TEST_MODEL_ID });
    settingsEvents.stop();
    expect(removed).toMatchObject({ state: 'available', installed: null, usedBy: { embeddings: false } });
    expect(settingsEvents.items.at(-1)?.models.embedding).toBeNull();
    expect((await host.api['settings.get']({})).models.embedding).toBeNull();
    expect(fs.existsSync(path.join(host.dataDir, 'models', ...TEST_MODEL_ID.split('/')))).toBe(false);
    // Nothing to delete is not an error.
    expect((await host.api['models.delete']({ id: TEST_MODEL_ID })).state).toBe('available');
  });

  it('refuses a chat model for memory search, and names the connections that use a model', async () => {
    const host = await start();
    const installed = changed(host, TEST_CHAT_MODEL_ID, (m) => m.state === 'installed');
    await host.api['models.download']({ id: TEST_CHAT_MODEL_ID });
    await installed;
    const refused = await rejection(host.api['models.useForEmbeddings']({ id: TEST_CHAT_MODEL_ID }));
    expect(refused).toMatchObject({ code: 'invalid_input', field: 'id' });
    const saved = await host.api['providers.save']({ kind: 'local', name: 'Tiny', baseUrl: '', model: TEST_CHAT_MODEL_ID });
    expect((await model(host, TEST_CHAT_MODEL_ID)).usedBy.providers).toEqual([{ id: saved.id, name: 'Tiny' }]);
    // Deleting it is the person's call (the UI asks first); the connection stays, reporting "not installed".
    expect((await host.api['models.delete']({ id: TEST_CHAT_MODEL_ID })).state).toBe('available');
    expect((await host.api['providers.list']({})).map((p) => p.id)).toEqual([saved.id]);
  });

  it('explains a full disk with numbers and leaves nothing installed', async () => {
    const host = await start({ freeBytes: () => 50_000_000 });
    const failed = changed(host, TEST_MODEL_ID, (m) => m.error !== null);
    await host.api['models.download']({ id: TEST_MODEL_ID });
    const m = await failed;
    expect(m.state).toBe('available');
    expect(m.installed).toBeNull();
    expect(m.error).toMatchObject({ code: 'model_disk_full', freeBytes: 50_000_000 });
    expect(m.error!.neededBytes).toBeGreaterThan(200_000_000);
    expect(m.error!.message).toMatch(/free/);
    // The error stays until the next attempt…
    expect((await model(host, TEST_MODEL_ID)).error?.code).toBe('model_disk_full');
  });

  it('discards a corrupted file, keeps the model uninstalled, and reports the integrity error until a retry works', async () => {
    modelHost.setFault(TEST_MODEL_ID, WEIGHTS, { corrupt: true });
    const host = await start();
    const failed = changed(host, TEST_MODEL_ID, (m) => m.error !== null);
    await host.api['models.download']({ id: TEST_MODEL_ID });
    const m = await failed;
    expect(m.error?.code).toBe('model_integrity');
    expect(m.state).not.toBe('installed');
    expect(fs.existsSync(path.join(host.dataDir, 'models', ...TEST_MODEL_ID.split('/'), 'anima-model.json'))).toBe(false);

    modelHost.setFault(TEST_MODEL_ID, WEIGHTS, undefined);
    const installed = changed(host, TEST_MODEL_ID, (x) => x.state === 'installed');
    const retry = await host.api['models.download']({ id: TEST_MODEL_ID });
    expect(retry.error).toBeNull();
    expect((await installed).error).toBeNull();
  });

  it('says when the model host does not have the model, or keeps failing', async () => {
    const host = await start();
    modelHost.setMissing(TEST_MODEL_ID);
    const missing = changed(host, TEST_MODEL_ID, (m) => m.error !== null);
    await host.api['models.download']({ id: TEST_MODEL_ID });
    expect((await missing).error?.code).toBe('model_not_found');
    modelHost.clearFaults();

    modelHost.setFault(TEST_MODEL_ID, WEIGHTS, { status: 503 });
    const failing = changed(host, TEST_MODEL_ID, (m) => m.error?.code === 'model_network');
    await host.api['models.download']({ id: TEST_MODEL_ID });
    expect((await failing).state).not.toBe('installed');

    // An unreachable host: nothing listens on the port any more.
    const gone = new FakeModelHost({ root: SERVED });
    const goneUrl = await gone.start();
    await gone.close();
    modelHost.clearFaults();
    await host.api['settings.update']({ models: { host: goneUrl } });
    const unreachable = changed(host, TEST_MODEL_ID, (m) => m.error?.code === 'model_network' && m.error.message.includes('127.0.0.1'));
    await host.api['models.download']({ id: TEST_MODEL_ID });
    await unreachable;

    expect((await rejection(host.api['models.download']({ id: 'nobody/nothing' }))).code).toBe('model_not_found');
    expect((await rejection(host.call('models.download', { id: '../etc' }))).code).toBe('invalid_input');
  });

  it('validates the model host and the embedding model settings, and resets an unreadable row', async () => {
    const host = await start();
    for (const bad of ['ftp://mirror.example', 'not a url', 'https://user:pw@hf-mirror.com', '']) {
      const err = await rejection(host.call('settings.update', { models: { host: bad } }));
      expect(err, bad).toMatchObject({ code: 'invalid_input', field: 'models.host' });
    }
    const extra = await rejection(host.call('settings.update', { models: { host: 'https://hf-mirror.com', colour: 'red' } }));
    expect(extra.code).toBe('invalid_input');
    const mirror = await host.api['settings.update']({ models: { host: ' https://hf-mirror.com/ ' } });
    expect(mirror.models).toEqual({ host: 'https://hf-mirror.com', embedding: null });
    const chat = await rejection(host.call('settings.update', { models: { embedding: 'onnx-community/Qwen2.5-0.5B-Instruct' } }));
    expect(chat).toMatchObject({ code: 'invalid_input', field: 'models.embedding' });
    const unknown = await rejection(host.call('settings.update', { models: { embedding: 'nobody/nothing' } }));
    expect(unknown.code).toBe('model_not_found');
    // Null is always fine, and the host setting is left alone.
    expect((await host.api['settings.update']({ models: { embedding: null } })).models.host).toBe('https://hf-mirror.com');

    await host.close();
    hosts.splice(hosts.indexOf(host), 1);
    const db = await openDatabase(host.dataDir);
    await db.query(`UPDATE settings SET value = '{"host": "gopher://old", "embedding": null}' WHERE key = 'models'`);
    await db.close();
    const again = await createHost({ dataDir: host.dataDir, detectLocalServers: false, log: () => {} });
    hosts.push(again);
    expect((await again.api['settings.get']({})).models).toEqual({ host: 'https://huggingface.co', embedding: null });
    expect((await again.api['app.info']({})).notices).toEqual(['The setting “models” was unreadable and has been reset to its default.']);
  });
});
