// The host: everything that is not UI — database, providers, chat — behind the API in shared/api.ts.
// It never imports `electron`, so the same host runs in Electron's utility process, in the browser-mode
// server, and in-process in tests.
import type { AnimaApi, DevicesListening, PairResult } from '../../shared/api.js';
import type { BackupServiceOptions } from '../backups/service.js';
import type { HostEventListener } from '../events/events.js';
import type { SecretStore } from '../settings/secrets.js';
import type { HistoryReaderOptions } from '../sleep/history.js';
import type { SleepServiceOptions } from '../sleep/service.js';

export interface HostOptions {
  /** The PGlite data lives in `${dataDir}/db`; the lock file and secrets beside it. */
  dataDir: string;
  mode?: 'electron' | 'browser';
  /** Defaults to an owner-only file in the data dir. */
  secrets?: SecretStore;
  /** Replace the global fetch (tests point providers at a loopback fake). */
  fetch?: typeof fetch;
  /** A dumped PGlite data dir (tar) used instead of initdb when the data dir is new: ~5× faster. */
  template?: Blob | File;
  /** Clock, for tests of sleep-day logic. */
  now?: () => Date;
  /** Provider timeouts (ms); tests shorten them. */
  providerTimeoutMs?: number;
  /** Probe for model servers on this machine (Ollama, LM Studio) when asked. Default true. */
  detectLocalServers?: boolean;
  /** Which local servers to probe; defaults to Ollama's and LM Studio's usual ports. */
  localServers?: { name: string; kind: 'openai-compatible'; baseUrl: string }[];
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** The sleep scheduler's timing (tests turn the timer off and call it directly). */
  sleep?: SleepServiceOptions;
  /** The imported-history catch-up's timing and pass size (tests turn the timer off and call it directly). */
  history?: HistoryReaderOptions;
  /** Free bytes on the data folder's disk (tests of a full disk). */
  freeBytes?: (dir: string) => number;
  /** The backup schedule's timing (tests turn the timer off and call tick directly). */
  backups?: BackupServiceOptions;
  /** The vault folder's automatic syncs (at start, after each night); the CLI turns them off. Default true. */
  vaultAuto?: boolean;
  /** A postgres:// URL: the data lives on that PostgreSQL server (db/postgres.ts) instead of `${dataDir}/db`; the lock and secrets stay in dataDir. */
  database?: string;
  /** Browser mode: the data folder's link (electron/serve/link.ts), which Settings can reset. */
  browserLink?: BrowserLinkControl;
}

/** What the host may do with browser mode's link: give it a new token (the old one is refused from then on). */
export interface BrowserLinkControl {
  reset(): Promise<string>;
}

/** What the LAN listener (serve/) asks of the paired devices (electron/devices/devices.ts). */
export interface DeviceAccess {
  /** The device a token belongs to; null for an unknown or revoked one. */
  authenticate(token: string): Promise<string | null>;
  /** Uses up a pairing secret; rejects with ApiError('unauthorized') for a wrong, used or expired one. */
  pair(secret: string, name: string): Promise<PairResult>;
  setListening(listening: DevicesListening | null): void;
  onRevoke(listener: (deviceId: string) => void): () => void;
}

export interface Host {
  /** Every API method; input is validated inside (untrusted). Rejects with ApiError. */
  readonly api: AnimaApi;
  /** Call by name with unvalidated input — what transports use. */
  call(method: string, input: unknown): Promise<unknown>;
  /** Subscribe to host events. Returns an unsubscribe function. */
  on(listener: HostEventListener): () => void;
  /** Waits for streaming replies to settle (stored as partial), closes the database, releases the lock. */
  close(): Promise<void>;
  readonly dataDir: string;
  /** Where finished exports are (the data folder's exports/): browser mode offers them as downloads. */
  readonly exportsDir?: string;
  /** Paired devices, for the LAN listener (`anima serve --listen`). */
  readonly devices?: DeviceAccess;
}
