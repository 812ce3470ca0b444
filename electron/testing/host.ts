// Test helpers: a real host on a real on-disk PGlite, started from the migrated template.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { createHost } from '../host/index.js';
import type { ApiEventName } from '../../shared/api.js';
import type { Host, HostOptions } from '../host/types.js';
import { PATIENCE_MS } from './patience.js';

export function tempDataDir(prefix = 'anima-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function dbTemplate(): Blob {
  return new Blob([fs.readFileSync(inject('dbTemplatePath'))]);
}

export async function startTestHost(options: Partial<HostOptions> = {}): Promise<Host> {
  return createHost({
    dataDir: options.dataDir ?? tempDataDir(),
    template: dbTemplate(),
    detectLocalServers: false,
    log: () => {},
    ...options,
  });
}

/** Resolves with the first event of this name that matches; rejects after `timeoutMs` (a bound for hangs). */
export function nextEvent<E extends ApiEventName>(
  host: Host,
  name: E,
  match: (payload: never) => boolean = () => true,
  timeoutMs = PATIENCE_MS,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no ${name} event within ${timeoutMs} ms`));
    }, timeoutMs);
    const off = host.on((event, payload) => {
      if (event === name && match(payload as never)) {
        clearTimeout(timer);
        off();
        resolve(payload);
      }
    });
  });
}
