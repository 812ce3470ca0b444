// The host's exports: one at a time, into `<dataDir>/exports/anima-export-<time>.zip`, with progress
// (at most four events a second, plus every change of state) and a cancel.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ApiError, type ApiErrorShape } from '../../shared/api.js';
import type { ArchiveExportStatus } from '../../shared/api/archive.js';
import type { Log } from '../../shared/log.js';
import type { Database } from '../db/open.js';
import { attachmentsDir } from '../attachments/store.js';
import { avatarDir } from '../companion/avatar.js';
import { exportArchive } from './export.js';

export function exportsDir(dataDir: string): string {
  return path.join(dataDir, 'exports');
}

/** anima-export-2026-11-03-142501.zip (UTC), with -2, -3 … when that name is taken: an export never replaces another. */
export function exportFileName(dir: string, at: Date): string {
  const stem = `anima-export-${at.toISOString().slice(0, 19).replace('T', '-').replace(/:/g, '')}`;
  for (let n = 1; ; n++) {
    const name = n === 1 ? `${stem}.zip` : `${stem}-${n}.zip`;
    if (!fs.existsSync(path.join(dir, name)) && !fs.existsSync(path.join(dir, `${name}.partial`))) return name;
  }
}

export class ArchiveExports {
  private current: { status: ArchiveExportStatus; controller: AbortController; done: Promise<void> } | null = null;
  private lastEmit = 0;

  constructor(
    private readonly o: {
      db: Database;
      dataDir: string;
      appVersion: string;
      now: () => Date;
      log: Log;
      emit: (status: ArchiveExportStatus) => void;
    },
  ) {}

  status(): ArchiveExportStatus | null {
    return this.current ? { ...this.current.status } : null;
  }

  start(): ArchiveExportStatus {
    if (this.current?.status.state === 'running') throw new ApiError('conflict', 'An export is already running.');
    const startedAt = this.o.now();
    const fileName = exportFileName(exportsDir(this.o.dataDir), startedAt);
    const file = path.join(exportsDir(this.o.dataDir), fileName);
    const status: ArchiveExportStatus = {
      id: randomUUID(),
      state: 'running',
      phase: 'data',
      fraction: 0,
      fileName,
      path: file,
      bytes: null,
      counts: null,
      startedAt: startedAt.toISOString(),
      finishedAt: null,
      error: null,
    };
    const controller = new AbortController();
    const done = exportArchive({
      db: this.o.db,
      appVersion: this.o.appVersion,
      file,
      signal: controller.signal,
      now: this.o.now,
      attachmentsDir: attachmentsDir(this.o.dataDir),
      avatarDir: avatarDir(this.o.dataDir),
      onProgress: (p) => {
        status.phase = p.phase;
        status.fraction = p.total ? Math.min(1, p.done / p.total) : 0;
        this.emit(false);
      },
    }).then(
      (result) => {
        Object.assign(status, { state: 'done', fraction: 1, bytes: result.bytes, counts: result.counts, finishedAt: this.o.now().toISOString() });
        this.o.log('info', `export: ${fileName} written (${result.bytes} bytes in ${result.ms} ms)`);
        this.emit(true);
      },
      (err: unknown) => {
        const cancelled = err instanceof ApiError && err.code === 'cancelled';
        const error: ApiErrorShape =
          err instanceof ApiError ? { code: err.code, message: err.message } : { code: 'internal', message: 'The export failed; nothing was written.' };
        if (!cancelled) this.o.log('error', `export failed: ${err instanceof Error ? err.message : String(err)}`);
        Object.assign(status, { state: cancelled ? 'cancelled' : 'failed', error, finishedAt: this.o.now().toISOString() });
        this.emit(true);
      },
    );
    this.current = { status, controller, done };
    this.emit(true);
    return { ...status };
  }

  cancel(): ArchiveExportStatus | null {
    if (this.current?.status.state === 'running') this.current.controller.abort();
    return this.status();
  }

  /** Stops a running export and waits for it to clean up (the host closing). */
  async close(): Promise<void> {
    if (!this.current) return;
    this.current.controller.abort();
    await this.current.done;
  }

  private emit(force: boolean): void {
    const t = Date.now();
    if (!force && t - this.lastEmit < 250) return;
    this.lastEmit = t;
    if (this.current) this.o.emit({ ...this.current.status });
  }
}
