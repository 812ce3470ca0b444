// The vault service kept in step: after a night's sleep ends well it syncs the chosen folder; a
// night that failed, or a folder not kept in step, leaves the folder alone.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VaultState } from '../../shared/api/vault.js';
import { openDatabase, type Database } from '../db/open.js';
import { HostEvents } from '../events/events.js';
import { MemoryStore } from '../memory/store.js';
import { SettingsStore } from '../settings/settings.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { VaultService } from './service.js';

let dataDir: string;
let folder: string;
let db: Database;
let events: HostEvents;
let service: VaultService;
let memories: MemoryStore;

const night = (status: 'done' | 'failed') => events.emit('sleep.finished', { runId: 1, sleepDay: '2026-12-04', status, error: null });
const memoryFiles = () => (fs.existsSync(path.join(folder, 'memories', 'world')) ? fs.readdirSync(path.join(folder, 'memories', 'world')).length : 0);

beforeAll(async () => {
  dataDir = tempDataDir('anima-vault-service-');
  folder = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-vault-service-folder-'));
  db = await openDatabase(dataDir, { template: dbTemplate() });
  events = new HostEvents();
  memories = new MemoryStore(db);
  const settings = new SettingsStore(db, () => {});
  service = new VaultService({ db, memories, settings, events, dataDir, now: () => new Date(), log: () => {} });
  service.start();
}, 60_000);

afterAll(async () => {
  await service?.close();
  await db?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(folder, { recursive: true, force: true });
});

describe('VaultService', () => {
  it('syncs after a night that ended well, only when the folder is kept in step', async () => {
    await memories.create({ type: 'world', content: 'Mara sings in a choir.', source: 'user', actor: 'person' });
    await service.configure({ folder, keepInStep: false });
    night('done');
    await service.sync({ dir: folder, dryRun: true }); // queued behind anything the night started
    expect(memoryFiles()).toBe(0);

    await service.configure({ folder, keepInStep: true });
    night('failed');
    await service.sync({ dir: folder, dryRun: true });
    expect(memoryFiles()).toBe(0);

    night('done');
    await expect.poll(memoryFiles, { timeout: 30_000 }).toBe(1);
    expect((await service.status()).last).toMatchObject({ dryRun: false, written: [expect.stringMatching(/^memories\/world\/\d+-mara-sings/)] });
  });

  it('announces a background sync to an open window (vault.changed with the state after it)', async () => {
    const seen: VaultState[] = [];
    const off = events.on((event, payload) => {
      if (event === 'vault.changed') seen.push(payload);
    });
    try {
      await memories.create({ type: 'world', content: 'Tomas keeps bees on the roof.', source: 'user', actor: 'person' });
      night('done');
      await expect.poll(() => seen.find((s) => s.last?.written.some((f) => f.includes('tomas-keeps-bees'))), { timeout: 30_000 }).toBeTruthy();
      const state = seen.at(-1)!;
      expect(state).toMatchObject({ running: false, problem: null, settings: { folder, keepInStep: true }, last: { dryRun: false } });
    } finally {
      off();
    }
  });
});
