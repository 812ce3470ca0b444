// The vault folder as a service of the host: the chosen folder and "keep it in step" (settings.vault),
// a sync at start and after each night's sleep when kept in step, "Sync now" and the preview — one
// sync at a time (a second waits for the first).
import type { VaultSettings, VaultState, VaultSyncReport } from '../../shared/api/vault.js';
import { ApiError } from '../../shared/api.js';
import type { Log } from '../../shared/log.js';
import type { Database } from '../db/open.js';
import type { HostEvents } from '../events/events.js';
import type { MemoryStore } from '../memory/store.js';
import type { SettingsStore } from '../settings/settings.js';
import { checkFolder, syncVault } from './sync.js';

export interface VaultServiceDeps {
  db: Database;
  memories: MemoryStore;
  settings: SettingsStore;
  events: HostEvents;
  dataDir: string;
  now: () => Date;
  log: Log;
  /** Sync the chosen folder at start and after each night when it is kept in step (the app; not the CLI). */
  auto?: boolean;
}

export class VaultService {
  private queue: Promise<unknown> = Promise.resolve();
  private running = 0;
  private last: VaultSyncReport | null = null;
  private problem: string | null = null;
  private off: (() => void) | undefined;
  private closed = false;

  constructor(private readonly deps: VaultServiceDeps) {}

  /** Kept in step: a sync now, and after every night's sleep. */
  start(): void {
    if (this.deps.auto === false) return;
    this.off = this.deps.events.on((event, payload) => {
      if (event === 'sleep.finished' && payload.status === 'done') void this.auto('after the night');
    });
    void this.auto('at start');
  }

  async close(): Promise<void> {
    this.closed = true;
    this.off?.();
    await this.queue.catch(() => {});
  }

  private async auto(when: string): Promise<void> {
    const { vault } = await this.deps.settings.get();
    if (!vault.keepInStep || !vault.folder || this.closed) return;
    try {
      const report = await this.run({});
      this.problem = null;
      const n = report.changes.length;
      this.deps.log(
        'info',
        `vault: synced ${vault.folder} ${when}: ${n} change${n === 1 ? '' : 's'}, ${report.written.length} written, ${report.conflicts.length} conflicts`,
      );
    } catch (err) {
      this.problem = err instanceof Error ? err.message : String(err);
      this.deps.log('warn', `vault: the sync ${when} failed: ${this.problem}`);
    }
    await this.announce();
  }

  /** Tell an open window (Settings → Data → Vault) the state after a sync, so it shows what ran in the background. */
  private async announce(): Promise<void> {
    try {
      this.deps.events.emit('vault.changed', await this.status());
    } catch (err) {
      this.deps.log('warn', `vault: could not announce the sync: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async status(): Promise<VaultState> {
    const { vault } = await this.deps.settings.get();
    return { settings: vault, last: this.last, running: this.running > 0, problem: this.problem };
  }

  async configure(next: VaultSettings): Promise<VaultState> {
    const folder = next.folder === null ? null : checkFolder(next.folder, this.deps.dataDir);
    if (next.keepInStep && !folder) throw new ApiError('invalid_input', 'Choose a vault folder first: there is nothing to keep in step.', 'folder');
    await this.deps.settings.update({ vault: { folder, keepInStep: next.keepInStep } });
    this.problem = null;
    return this.status();
  }

  /** One sync of `dir` (default: the chosen folder); a preview with dryRun. Announced as `vault.changed` when it ends. */
  async sync(input: { dir?: string; dryRun?: boolean }): Promise<VaultSyncReport> {
    try {
      return await this.run(input);
    } finally {
      await this.announce();
    }
  }

  private run(input: { dir?: string; dryRun?: boolean }): Promise<VaultSyncReport> {
    const run = async () => {
      if (this.closed) throw new ApiError('conflict', 'Anima is shutting down.');
      const dir = input.dir ?? (await this.deps.settings.get()).vault.folder;
      if (!dir) throw new ApiError('invalid_input', 'Choose a vault folder first.', 'dir');
      this.running++;
      try {
        const report = await syncVault({
          db: this.deps.db,
          memories: this.deps.memories,
          dir,
          dryRun: input.dryRun,
          dataDir: this.deps.dataDir,
          now: this.deps.now,
        });
        this.last = report;
        return report;
      } finally {
        this.running--;
      }
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => {});
    return result;
  }
}
