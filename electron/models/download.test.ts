import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { catalogEntry, TEST_MODEL_ID, type CatalogEntry } from './catalog.js';
import {
  checkModel,
  deleteModel,
  downloadModel,
  installedModels,
  isModelId,
  ModelDownloads,
  ModelError,
  partialBytes,
  type DownloadOptions,
  type DownloadProgress,
} from './download.js';
import { FakeModelHost } from './testing/model-host.js';
import { PATIENCE_MS } from '../testing/patience.js';

const ID = 'test-org/tiny';
const KB = 1024;
const SIZES = {
  'config.json': 700,
  'tokenizer.json': 40 * KB,
  'tokenizer_config.json': 400,
  'onnx/model.onnx': 200 * KB,
} as const;
const TOTAL = Object.values(SIZES).reduce((a, b) => a + b, 0);
const ENTRY: CatalogEntry = {
  id: ID,
  task: 'embedding',
  name: 'Tiny test model',
  approxBytes: TOTAL,
  languages: ['en'],
  licence: 'MIT',
  goodFor: 'tests',
  files: ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx'],
  optionalFiles: ['generation_config.json'],
  dtype: 'fp32',
  variantReason: 'tests',
  dimensions: 8,
  queryPrefix: '',
  passagePrefix: '',
};

let work: string;
let served: string;
let host: FakeModelHost;
let modelsDir: string;
let caseNo = 0;
const contents = new Map<string, Buffer>();

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-download-'));
  served = path.join(work, 'served');
  for (const [file, size] of Object.entries(SIZES)) {
    const full = path.join(served, ...ID.split('/'), ...file.split('/'));
    fs.mkdirSync(path.dirname(full), { recursive: true });
    const bytes = randomBytes(size);
    fs.writeFileSync(full, bytes);
    contents.set(file, bytes);
  }
  host = new FakeModelHost({ root: served });
  await host.start();
});

afterAll(async () => {
  await host.close();
  fs.rmSync(work, { recursive: true, force: true });
});

beforeEach(() => {
  modelsDir = path.join(work, `models-${++caseNo}`);
  host.requests.length = 0;
});

afterEach(() => host.clearFaults());

function options(extra: Partial<DownloadOptions> = {}): DownloadOptions {
  return {
    modelsDir,
    host: host.url,
    freeSpace: async () => 50e9,
    retryDelayMs: 10,
    retries: 3,
    idleTimeoutMs: PATIENCE_MS, // no test here is about stalls: a bound for hangs only
    ...extra,
  };
}

async function failure(promise: Promise<unknown>): Promise<ModelError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

function installedFile(file: string): Buffer {
  return fs.readFileSync(path.join(modelsDir, ...ID.split('/'), ...file.split('/')));
}

function partialFile(file: string): string {
  return path.join(modelsDir, ...ID.split('/'), '.partial', ...file.split('/'));
}

describe('downloadModel', () => {
  it('downloads, verifies and installs every file with a manifest', async () => {
    const manifest = await downloadModel(ENTRY, options());
    for (const [file, bytes] of contents) expect(installedFile(file).equals(bytes)).toBe(true);
    expect(manifest.id).toBe(ID);
    expect(manifest.host).toBe(host.url);
    expect(manifest.files.map((f) => f.path)).toEqual(ENTRY.files); // the optional file is not on the host
    const model = manifest.files.find((f) => f.path === 'onnx/model.onnx');
    expect(model).toEqual({
      path: 'onnx/model.onnx',
      size: SIZES['onnx/model.onnx'],
      sha256: createHash('sha256').update(contents.get('onnx/model.onnx')!).digest('hex'),
    });
    // The weights came through the CDN-style redirect, as on the real hub.
    expect(host.requestsFor(ID, 'onnx/model.onnx').map((r) => r.status)).toEqual([302, 200]);

    const installed = await installedModels(modelsDir);
    expect(installed.map((m) => m.id)).toEqual([ID]);
    expect(installed[0]!.manifest).toEqual(manifest);
    expect(installed[0]!.bytesOnDisk).toBeGreaterThanOrEqual(TOTAL);
    await expect(checkModel(modelsDir, ID, { full: true })).resolves.toEqual(manifest);
    // Nothing is left behind: no partial files, no staging or trash folders.
    expect(fs.readdirSync(modelsDir)).toEqual(['test-org']);
    expect(fs.existsSync(path.join(modelsDir, ...ID.split('/'), '.partial'))).toBe(false);
  });

  it('fetches optional files when the host has them', async () => {
    const extra = path.join(served, ...ID.split('/'), 'generation_config.json');
    fs.writeFileSync(extra, '{"eos_token_id": 2}');
    try {
      const manifest = await downloadModel(ENTRY, options());
      expect(manifest.files.map((f) => f.path)).toContain('generation_config.json');
    } finally {
      fs.rmSync(extra);
    }
  });

  it('resumes a file with a Range request after the connection drops mid-file', async () => {
    host.setFault(ID, 'onnx/model.onnx', { dropAfterBytes: 70 * KB });
    await downloadModel(ENTRY, options());
    const ranged = host.requestsFor(ID, 'onnx/model.onnx').filter((r) => r.status === 206);
    expect(ranged.length).toBe(1);
    expect(ranged[0]!.range).toBe(`bytes=${70 * KB}-`);
    expect(installedFile('onnx/model.onnx').equals(contents.get('onnx/model.onnx')!)).toBe(true);
    await checkModel(modelsDir, ID, { full: true });
  });

  it('starts a file over when the host answers a Range request with 200', async () => {
    host.setFault(ID, 'onnx/model.onnx', { dropAfterBytes: 50 * KB, ignoreRange: true });
    await downloadModel(ENTRY, options());
    const requests = host.requestsFor(ID, 'onnx/model.onnx').filter((r) => r.status !== 302);
    expect(requests.map((r) => [r.status, r.range])).toEqual([
      [200, undefined],
      [200, `bytes=${50 * KB}-`],
    ]);
    await checkModel(modelsDir, ID, { full: true });
  });

  it('gives up with a network error when a file keeps failing, keeping what arrived', async () => {
    host.setFault(ID, 'onnx/model.onnx', { dropAfterBytes: 0, dropTimes: Infinity });
    const error = await failure(downloadModel(ENTRY, options({ retries: 2 })));
    expect(error.code).toBe('network');
    expect(error.file).toBe('onnx/model.onnx');
    expect(error.message).toContain('onnx/model.onnx');
    // The files before it are verified and waiting; the next start skips them.
    expect(fs.statSync(partialFile('tokenizer.json')).size).toBe(SIZES['tokenizer.json']);
    expect(await installedModels(modelsDir)).toEqual([]);
  });

  it('retries a host that answers 503, then reports a network error naming the file', async () => {
    host.setFault(ID, 'tokenizer.json', { status: 503 });
    const error = await failure(downloadModel(ENTRY, options({ retries: 2 })));
    expect(error).toMatchObject({ code: 'network', file: 'tokenizer.json' });
    expect(host.requestsFor(ID, 'tokenizer.json').length).toBe(3);
  });

  it('keeps partial bytes on cancel and continues from them on the next start', async () => {
    host.setFault(ID, 'onnx/model.onnx', { bytesPerSecond: 400 * KB });
    const controller = new AbortController();
    const cutAt = TOTAL - SIZES['onnx/model.onnx'] + 60 * KB;
    const first = downloadModel(
      ENTRY,
      options({
        signal: controller.signal,
        progressIntervalMs: 10,
        onProgress: (p) => {
          if (p.bytesDone >= cutAt) controller.abort();
        },
      }),
    );
    const error = await failure(first);
    expect(error.code).toBe('cancelled');
    const kept = fs.statSync(partialFile('onnx/model.onnx')).size;
    expect(kept).toBeGreaterThanOrEqual(60 * KB);
    expect(kept).toBeLessThan(SIZES['onnx/model.onnx']);
    expect(await partialBytes(modelsDir, ID)).toBe(TOTAL - SIZES['onnx/model.onnx'] + kept);

    host.setFault(ID, 'onnx/model.onnx', undefined);
    host.requests.length = 0;
    const events: DownloadProgress[] = [];
    await downloadModel(ENTRY, options({ onProgress: (p) => events.push(p) }));
    const resumed = host.requestsFor(ID, 'onnx/model.onnx').filter((r) => r.status === 206);
    expect(resumed.map((r) => r.range)).toEqual([`bytes=${kept}-`]);
    // The finished files were not fetched again.
    expect(host.requestsFor(ID, 'tokenizer.json')).toEqual([]);
    const firstDownloading = events.find((e) => e.phase === 'downloading')!;
    expect(firstDownloading.bytesDone).toBe(TOTAL - SIZES['onnx/model.onnx'] + kept);
    await checkModel(modelsDir, ID, { full: true });
  });

  it('reports a model the host does not have, writing nothing', async () => {
    host.setMissing(ID);
    const error = await failure(downloadModel(ENTRY, options()));
    expect(error.code).toBe('model_not_found');
    expect(error.message).toContain(ID);
    expect(fs.existsSync(modelsDir)).toBe(false);
  });

  it('reports a catalogue file the host does not list', async () => {
    const entry = { ...ENTRY, files: [...ENTRY.files.filter((f) => f !== 'onnx/model.onnx'), 'onnx/model_quantized.onnx'] };
    const error = await failure(downloadModel(entry, options()));
    expect(error.code).toBe('model_not_found');
    expect(error.file).toBe('onnx/model_quantized.onnx');
  });

  it('discards a file longer than listed; the installed version stays intact', async () => {
    const before = await downloadModel(ENTRY, options());
    host.setFault(ID, 'onnx/model.onnx', { listedSize: SIZES['onnx/model.onnx'] - 1000 });
    const error = await failure(downloadModel(ENTRY, options()));
    expect(error.code).toBe('integrity');
    expect(error.file).toBe('onnx/model.onnx');
    expect(error.message).toContain('onnx/model.onnx');
    expect(fs.existsSync(partialFile('onnx/model.onnx'))).toBe(false);
    await expect(checkModel(modelsDir, ID, { full: true })).resolves.toEqual(before);
    expect(installedFile('onnx/model.onnx').equals(contents.get('onnx/model.onnx')!)).toBe(true);
  });

  it('discards a file shorter than listed', async () => {
    host.setFault(ID, 'tokenizer.json', { listedSize: SIZES['tokenizer.json'] + 1000 });
    const error = await failure(downloadModel(ENTRY, options()));
    expect(error.code).toBe('integrity');
    expect(error.file).toBe('tokenizer.json');
    expect(fs.existsSync(partialFile('tokenizer.json'))).toBe(false);
    expect(await installedModels(modelsDir)).toEqual([]);
  });

  it('discards a file whose bytes do not match the listed hash (LFS sha256 and git blob sha1)', async () => {
    for (const file of ['onnx/model.onnx', 'tokenizer.json']) {
      // A fresh folder: the first round leaves the other files verified in .partial/, not fetched again.
      modelsDir = path.join(work, `models-${++caseNo}`);
      host.clearFaults();
      host.setFault(ID, file, { corrupt: true });
      const error = await failure(downloadModel(ENTRY, options()));
      expect(error.code).toBe('integrity');
      expect(error.file).toBe(file);
      expect(error.message).toContain(file);
      expect(fs.existsSync(partialFile(file))).toBe(false);
    }
  });

  it('refuses to start without room on the disk, with the numbers', async () => {
    const error = await failure(downloadModel(ENTRY, options({ freeSpace: async () => 10e6 })));
    expect(error.code).toBe('disk_full');
    expect(error.message).toMatch(/0\.\d MB more plus 200 MB to spare, and 10 MB is free/);
    expect(await installedModels(modelsDir)).toEqual([]);
    // Enough room for the download and the margin: it goes ahead.
    await downloadModel(ENTRY, options({ freeSpace: async () => 10e6, diskMarginBytes: 1e6 }));
  });

  it('reports progress that only grows, with a speed and the time left', async () => {
    host.setFault(ID, 'onnx/model.onnx', { bytesPerSecond: 500 * KB });
    const events: DownloadProgress[] = [];
    await downloadModel(ENTRY, options({ progressIntervalMs: 20, onProgress: (p) => events.push(p) }));
    const counted = events.filter((e) => e.phase !== 'checking');
    expect(counted.length).toBeGreaterThan(5);
    for (let i = 1; i < counted.length; i++) expect(counted[i]!.bytesDone).toBeGreaterThanOrEqual(counted[i - 1]!.bytesDone);
    expect(counted.every((e) => e.bytesTotal === TOTAL && e.fileCount === 4)).toBe(true);
    const moving = counted.filter((e) => e.phase === 'downloading' && e.bytesPerSecond > 0);
    expect(moving.length).toBeGreaterThan(2);
    expect(moving.some((e) => e.secondsLeft !== null && e.secondsLeft > 0)).toBe(true);
    const speeds = moving.filter((e) => e.file === 'onnx/model.onnx').map((e) => e.bytesPerSecond);
    expect(speeds.at(-1)!).toBeLessThan(5 * 500 * KB); // the throttle shows through the smoothing
    expect(counted.at(-1)).toMatchObject({ phase: 'done', bytesDone: TOTAL, secondsLeft: 0 });
  });

  it('refuses a second download of the same model while one runs', async () => {
    host.setFault(ID, 'onnx/model.onnx', { bytesPerSecond: 1000 * KB });
    const first = downloadModel(ENTRY, options());
    const error = await failure(downloadModel(ENTRY, options()));
    expect(error.code).toBe('busy');
    await expect(deleteModel(modelsDir, ID)).rejects.toMatchObject({ code: 'busy' });
    await first;
  });
});

describe('ModelDownloads', () => {
  it('joins a second start for the same model and cancels by id', async () => {
    host.setFault(ID, 'onnx/model.onnx', { bytesPerSecond: 300 * KB });
    const downloads = new ModelDownloads({ modelsDir, host: () => host.url, freeSpace: async () => 50e9, progressIntervalMs: 10 });
    const seen: DownloadProgress[] = [];
    const unsubscribe = downloads.onProgress((p) => seen.push(p));
    const first = downloads.start(ENTRY);
    expect(downloads.start(ENTRY)).toBe(first);
    expect(downloads.isRunning(ID)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(downloads.progress()[0]?.id).toBe(ID);
    expect(downloads.cancel(ID)).toBe(true);
    await expect(first).rejects.toMatchObject({ code: 'cancelled' });
    expect(downloads.isRunning(ID)).toBe(false);
    expect(seen.length).toBeGreaterThan(0);

    host.setFault(ID, 'onnx/model.onnx', undefined);
    await downloads.start(ENTRY);
    unsubscribe();
    await downloads.close();
    expect((await installedModels(modelsDir)).map((m) => m.id)).toEqual([ID]);
  });
});

describe('installed models', () => {
  it('deletes a model and its unfinished download', async () => {
    await downloadModel(ENTRY, options());
    expect(await deleteModel(modelsDir, ID)).toBe(true);
    expect(await installedModels(modelsDir)).toEqual([]);
    expect(fs.existsSync(path.join(modelsDir, 'test-org'))).toBe(false);
    expect(await deleteModel(modelsDir, ID)).toBe(false);
  });

  it('checkModel names a missing or truncated file', async () => {
    await downloadModel(ENTRY, options());
    const weights = path.join(modelsDir, ...ID.split('/'), 'onnx', 'model.onnx');
    fs.truncateSync(weights, 1000);
    await expect(checkModel(modelsDir, ID)).rejects.toMatchObject({ code: 'integrity', file: 'onnx/model.onnx' });
    await expect(checkModel(modelsDir, ID)).rejects.toThrow(/onnx\/model\.onnx.*truncated \(1000 of 204800 bytes\)/);
    fs.rmSync(path.join(modelsDir, ...ID.split('/'), 'tokenizer.json'));
    await expect(checkModel(modelsDir, ID)).rejects.toThrow(/tokenizer\.json .* is missing/);
    await expect(checkModel(modelsDir, 'test-org/other')).rejects.toMatchObject({ code: 'not_installed' });
  });

  it('finishes an install a crash interrupted between the two renames', async () => {
    const manifest = await downloadModel(ENTRY, options());
    // As if the process died after moving the old folder away and before moving the new one in.
    const dir = path.join(modelsDir, ...ID.split('/'));
    const staging = path.join(modelsDir, '.staging', ...ID.split('/'));
    fs.mkdirSync(path.dirname(staging), { recursive: true });
    fs.renameSync(dir, staging);
    const installed = await installedModels(modelsDir);
    expect(installed.map((m) => m.manifest)).toEqual([manifest]);
    await checkModel(modelsDir, ID, { full: true });
  });

  it('refuses ids that could reach outside the models folder', async () => {
    const outside = path.join(work, `outside-${caseNo}`);
    fs.mkdirSync(path.join(outside, 'keep'), { recursive: true });
    fs.mkdirSync(modelsDir, { recursive: true });
    const relative = path.relative(modelsDir, outside);
    const bad = [
      '..',
      '../x',
      `${relative}/keep`,
      'a/..',
      'a/../../b',
      '../../etc',
      '/etc/passwd',
      'a/b/c',
      'a\\..\\b',
      '.staging/x',
      'org/.partial',
      'name-only',
      '',
      'a/b\0',
      outside,
    ];
    for (const id of bad) {
      expect(isModelId(id)).toBe(false);
      await expect(deleteModel(modelsDir, id)).rejects.toMatchObject({ code: 'invalid_id' });
      await expect(checkModel(modelsDir, id)).rejects.toMatchObject({ code: 'invalid_id' });
      await expect(downloadModel({ ...ENTRY, id }, options())).rejects.toMatchObject({ code: 'invalid_id' });
    }
    const unsafeFile = { ...ENTRY, files: [...ENTRY.files, '../../escape.json'] };
    await expect(downloadModel(unsafeFile, options())).rejects.toMatchObject({ code: 'invalid_id' });
    expect(fs.existsSync(path.join(outside, 'keep'))).toBe(true);
    expect(host.requests).toEqual([]);
  });
});

describe('the fake model host serving the repository test models', () => {
  const root = path.join(path.dirname(fileURLToPath(import.meta.url)), 'testing', 'models');

  // What an e2e run does: the app's model host setting pointed at a FakeModelHost over testing/models.
  it.skipIf(!fs.existsSync(path.join(root, ...TEST_MODEL_ID.split('/'))))('downloads anima-test/tiny-bert', async () => {
    const repoHost = new FakeModelHost({ root, lifetimeMs: 30_000 });
    await repoHost.start();
    try {
      const entry = catalogEntry(TEST_MODEL_ID, { includeTestModels: true });
      const manifest = await downloadModel(entry, { ...options(), host: repoHost.url });
      expect(manifest.files.map((f) => f.path)).toEqual(entry.files);
      for (const file of entry.files) {
        const got = fs.readFileSync(path.join(modelsDir, ...TEST_MODEL_ID.split('/'), ...file.split('/')));
        expect(got.equals(fs.readFileSync(path.join(root, ...TEST_MODEL_ID.split('/'), ...file.split('/')))), file).toBe(true);
      }
    } finally {
      await repoHost.close();
    }
  });
});
