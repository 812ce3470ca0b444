// For backup tests: scratch folders, and hosts on them whose backup and sleep timers never fire on
// their own (a test makes each copy itself). After the file, every host still open is closed and
// every folder removed.
import fs from 'node:fs';
import { afterAll } from 'vitest';
import type { Host, HostOptions } from '../../host/types.js';
import { startTestHost, tempDataDir } from '../../testing/host.js';

export interface BackupHosts {
  /** A new empty folder, removed after the file. */
  scratch(prefix?: string): string;
  /** A folder made elsewhere, to be removed after the file too. */
  removeAfterAll(dir: string): void;
  open(dataDir: string, options?: Partial<HostOptions>): Promise<Host>;
  close(host: Host): Promise<void>;
}

export function useBackupHosts(scratchPrefix: string): BackupHosts {
  const dirs: string[] = [];
  const hosts: Host[] = [];
  afterAll(async () => {
    await Promise.all(hosts.map((h) => h.close().catch(() => {})));
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });
  return {
    scratch(prefix = scratchPrefix) {
      const d = tempDataDir(prefix);
      dirs.push(d);
      return d;
    },
    removeAfterAll: (dir) => void dirs.push(dir),
    async open(dataDir, options = {}) {
      const host = await startTestHost({ dataDir, backups: { tickMs: 0 }, sleep: { tickMs: 0 }, ...options });
      hosts.push(host);
      return host;
    },
    async close(host) {
      hosts.splice(hosts.indexOf(host), 1);
      await host.close();
    },
  };
}
