// archive.* through the host API: an export runs in the background with archive.progress events and
// ends in a zip in the data folder's exports/; a second one waits its turn; a cancel leaves no file.
import fs from 'node:fs';
import path from 'node:path';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArchiveExportStatus } from '../../shared/api.js';
import type { Host } from '../host/types.js';
import { startTestHost, tempDataDir } from '../testing/host.js';

let host: Host;
let dataDir: string;

function ended(id: string, timeoutMs = 60_000): Promise<ArchiveExportStatus> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`export ${id} did not end within ${timeoutMs} ms`)), timeoutMs);
    const off = host.on((event, payload) => {
      if (event === 'archive.progress' && payload.id === id && payload.state !== 'running') {
        clearTimeout(timer);
        off();
        resolve(payload);
      }
    });
  });
}

beforeAll(async () => {
  dataDir = tempDataDir('anima-archive-api-');
  host = await startTestHost({ dataDir });
  const c = await host.api['conversations.create']({ title: 'Hello' });
  expect(c.id).toEqual(expect.any(String));
}, 60_000);

afterAll(async () => {
  await host?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('archive.export', () => {
  it('writes a zip into exports/ and reports its progress, size and counts', async () => {
    expect(await host.api['archive.exportStatus']({})).toBeNull();
    const events: ArchiveExportStatus[] = [];
    const off = host.on((event, payload) => {
      if (event === 'archive.progress') events.push(payload);
    });
    const started = await host.api['archive.export']({});
    expect(started).toMatchObject({ state: 'running', fraction: 0, fileName: expect.stringMatching(/^anima-export-\d{4}-\d{2}-\d{2}-\d{6}(-\d+)?\.zip$/) });
    expect(path.dirname(started.path)).toBe(path.join(dataDir, 'exports'));
    await expect(host.api['archive.export']({})).rejects.toMatchObject({ code: 'conflict' });
    const done = await ended(started.id);
    off();
    expect(done).toMatchObject({ state: 'done', fraction: 1, error: null, counts: expect.objectContaining({ conversations: 1 }) });
    expect(done.bytes).toBe(fs.statSync(started.path).size);
    expect(Object.keys(unzipSync(fs.readFileSync(started.path)))).toEqual(
      expect.arrayContaining(['anima.json', 'anima.sql', 'manifest.json', 'vault/self.md']),
    );
    expect(events[0]?.state).toBe('running');
    expect(events.at(-1)?.state).toBe('done');
    expect(await host.api['archive.exportStatus']({})).toMatchObject({ id: started.id, state: 'done' });
  });

  it('cancel: the export ends as cancelled and leaves no file', async () => {
    const started = await host.api['archive.export']({});
    const cancelled = await host.api['archive.cancel']({});
    expect(cancelled?.id).toBe(started.id);
    const end = await ended(started.id);
    expect(end).toMatchObject({ state: 'cancelled', error: { code: 'cancelled' } });
    expect(fs.existsSync(started.path)).toBe(false);
    expect(fs.existsSync(`${started.path}.partial`)).toBe(false);
  });
});
