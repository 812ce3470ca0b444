// Anima's own archive through the host API, the path the window and `anima import` take: uploaded in
// chunks, previewed part by part (nothing stored), applied with imports.progress to its end, and then
// the conversations, memories and diary are there for the API to read — no API key came with it.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IMPORT_CHUNK_BYTES, type ImportProgress } from '../../shared/api.js';
import { exportArchive } from '../archive/export.js';
import { SECRET_KEY, seedFolder } from '../archive/testing/seed.js';
import { openDatabase } from '../db/open.js';
import type { Host } from '../host/types.js';
import { dbTemplate, nextEvent, startTestHost, tempDataDir } from '../testing/host.js';
import { PATIENCE_MS } from '../testing/patience.js';

let zip: Buffer;
let host: Host;
const dirs: string[] = [];

beforeAll(async () => {
  const source = tempDataDir('anima-archive-api-src-');
  dirs.push(source);
  const db = await openDatabase(source, { template: dbTemplate() });
  await seedFolder(db, source);
  const file = path.join(source, 'exports', 'a.zip');
  await exportArchive({ db, appVersion: '1.0.0', file, sql: false });
  await db.close();
  zip = fs.readFileSync(file);
  const dataDir = tempDataDir('anima-archive-api-');
  dirs.push(dataDir);
  host = await startTestHost({ dataDir, sleep: { tickMs: 0 } });
}, 120_000);

afterAll(async () => {
  await host?.close();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

async function upload(): Promise<string> {
  let uploadId: string | undefined;
  for (let offset = 0; offset < zip.length; offset += IMPORT_CHUNK_BYTES) {
    const data = zip.subarray(offset, offset + IMPORT_CHUNK_BYTES).toString('base64');
    ({ uploadId } = await host.api['imports.upload']({ uploadId, name: 'anima-export.zip', size: zip.length, offset, data }));
  }
  return uploadId!;
}

describe('imports.* with an Anima archive', () => {
  it('previews every part, stores it whole, and the API reads it back', async () => {
    const preview = await host.api['imports.preview']({ uploadId: await upload() });
    expect(preview).toMatchObject({ format: 'anima', conversations: 2, alreadyImported: 0, messages: 4, versions: 1, card: null });
    expect(preview.from?.slice(0, 10)).toBe('2026-11-01');
    expect(preview.archive).toMatchObject({
      appVersion: '1.0.0',
      parts: { memories: { total: 3, already: 0 }, diaryBlocks: { total: 7, already: 0 }, moodDays: { total: 2, already: 0 } },
    });
    expect(await host.api['conversations.list']({})).toEqual([]);

    const ended = nextEvent(host, 'imports.progress', (p: ImportProgress) => p.state !== 'running');
    await host.api['imports.apply']({ previewId: preview.previewId });
    expect(await ended).toMatchObject({ state: 'done', format: 'anima', imported: 2, messages: 4, versions: 1, error: null });

    expect(await host.api['conversations.list']({})).toHaveLength(2);
    const memories = JSON.stringify(await host.api['memories.list']({}));
    expect(memories).toContain('Kyoto');
    expect(JSON.stringify(await host.api['providers.list']({}))).not.toContain(SECRET_KEY);
    // The graph reads the restored memories for mentions now, not at the next start.
    const [kyoto] = await host.api['graph.search']({ query: 'Kyoto' });
    expect(kyoto?.name).toBe('Kyoto');
    await expect.poll(async () => (await host.api['graph.entity']({ id: kyoto!.id })).facts.length, { timeout: PATIENCE_MS, interval: 100 }).toBeGreaterThan(0);

    // Again: every part is here already.
    const again = await host.api['imports.preview']({ uploadId: await upload() });
    for (const [part, c] of Object.entries(again.archive!.parts)) expect(c.already, part).toBe(c.total);
  });
});
