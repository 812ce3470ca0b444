// Where the desktop window's app is: this computer's host (app://), or the person's own Anima server,
// paired like a phone and shown in this window (shared/bridge.ts DesktopShell; the checks and the
// remembered file are server-link.ts). Main's state, and each move between the two:
//
//   useServer(link)   check the link → reach the server, its certificate pinned → remember it →
//                     stop this computer's host (its data folder let go, untouched) → pin the
//                     certificate for Chromium → load the link (the server's pair page pairs us)
//   useThisComputer   start the host again → load app:// (the server stays remembered)
//   forgetServer      back to this computer if needed → clear what the window kept for the
//                     server's origin (its device token) → delete the file → unpin
//   launch            the window opens where it was last; a remembered server that does not answer
//                     (the check, or the page failing to load) falls back to this computer, saying so
//
// Moves run one at a time. Nothing here reads the renderer: the page loaded is the only message.
import path from 'node:path';

import type { Session } from 'electron';
import type { ErrorCode } from '../../shared/api.js';
import type { BridgeReply, DesktopWhere } from '../../shared/bridge.js';
import type { Log } from '../host-process/port-server.js';
import { APP_ENTRY_URL } from './app-url.js';
import {
  checkServer,
  deleteRemembered,
  parsePairingLink,
  pinnedVerify,
  publicServer,
  readRemembered,
  REMEMBERED_FILE,
  ServerLinkError,
  writeRemembered,
  type RememberedState,
  type ServerRefusal,
} from './server-link.js';

/** Chromium's net::ERR_ABORTED: a load replaced by another, not a failure. */
const ERR_ABORTED = -3;
/**
 * At launch the window waits for this check (this computer's host must not open the data folder
 * before it is known whether the window goes to the server): a server at home answers within
 * milliseconds, and a laptop away from home should not wait long to fall back to its own data.
 */
export const LAUNCH_CHECK_TIMEOUT_MS = 3_000;

/** The parts of a BrowserWindow this moves. */
export interface WindowLike {
  isDestroyed(): boolean;
  loadURL(url: string): Promise<void>;
}

export interface RemoteServerOptions {
  userData: string;
  session: Pick<Session, 'setCertificateVerifyProc' | 'clearStorageData'>;
  /** The window to move (null while none is open, e.g. on macOS without windows). */
  window(): WindowLike | null;
  startHost(): void;
  /** Resolves once this computer's host has closed its data folder. */
  stopHost(): Promise<void>;
  log: Log;
  now?: () => Date;
  /** Bound of each check of the server the person asked for (connect, handshake, answer); default server-link's. */
  checkTimeoutMs?: number;
  /** Bound of the check at launch; default LAUNCH_CHECK_TIMEOUT_MS. */
  launchCheckTimeoutMs?: number;
}

/** The shell's refusals are its own codes (the renderer reads them as text); they travel in the API's error shape. */
function refused(code: ServerRefusal | 'internal', message: string): BridgeReply {
  return { ok: false, error: { code: code as ErrorCode, message } };
}

export class RemoteServer {
  private remembered: RememberedState | null = null;
  private onServer = false;
  private unreachable = false;
  private verifyInstalled = false;
  private queue: Promise<unknown> = Promise.resolve();
  readonly file: string;

  constructor(private readonly options: RemoteServerOptions) {
    this.file = path.join(options.userData, REMEMBERED_FILE);
  }

  /** The paired server's origin while the window is on it, else null (the window shows app:// only). */
  serverOrigin(): string | null {
    return this.onServer && this.remembered ? this.remembered.origin : null;
  }

  where(): DesktopWhere {
    const server = this.remembered ? publicServer(this.remembered) : null;
    if (this.onServer && server) return { kind: 'server', server };
    return this.unreachable ? { kind: 'local', server, serverUnreachable: true } : { kind: 'local', server };
  }

  /** What a window opened now should load. */
  currentUrl(): string {
    return this.serverOrigin() ? `${this.serverOrigin()}/` : APP_ENTRY_URL;
  }

  /**
   * At start, before the window opens: on the remembered server when the app was last there and it
   * answers (no pairing fragment: the page keeps its device token), else this computer — its host
   * started here. Returns the first page to load.
   */
  launch(): Promise<string> {
    return this.serially(async () => {
      this.remembered = await readRemembered(this.file);
      const server = this.remembered;
      if (server) this.installVerify();
      if (server?.lastUsed === 'server') {
        const check = await checkServer(server.origin, server.fingerprint, {
          timeoutMs: this.options.launchCheckTimeoutMs ?? LAUNCH_CHECK_TIMEOUT_MS,
        });
        if (check.ok) {
          this.onServer = true;
          return `${server.origin}/`;
        }
        this.options.log('warn', `the remembered server did not answer; using this computer: ${check.message}`);
        this.unreachable = true;
      }
      this.options.startHost();
      return APP_ENTRY_URL;
    });
  }

  useServer(link: unknown): Promise<BridgeReply> {
    return this.serially(async () => {
      let parsed;
      try {
        parsed = parsePairingLink(link);
      } catch (err) {
        if (err instanceof ServerLinkError) return refused(err.code, err.message);
        throw err;
      }
      const check = await checkServer(parsed.origin, parsed.fingerprint, { timeoutMs: this.options.checkTimeoutMs });
      if (!check.ok) return refused(check.code, check.message);
      const before = this.remembered;
      const same = before?.origin === parsed.origin && before.fingerprint === parsed.fingerprint;
      const next: RememberedState = {
        origin: parsed.origin,
        fingerprint: parsed.fingerprint,
        since: same ? before.since : this.now().toISOString(),
        lastUsed: 'server',
      };
      try {
        await writeRemembered(this.file, next);
      } catch (err) {
        return refused('internal', `Could not remember the server: ${(err as Error).message}`);
      }
      // One server is remembered: another one before it is forgotten, with what the window kept for it.
      if (before && before.origin !== next.origin) await this.clearOrigin(before.origin);
      this.remembered = next;
      await this.goToServer(parsed.href);
      return { ok: true, value: null };
    });
  }

  reopenServer(): Promise<BridgeReply> {
    return this.serially(async () => {
      const server = this.remembered;
      if (!server) return refused('invalid_link', 'No server is remembered: connect with a pairing link first.');
      const check = await checkServer(server.origin, server.fingerprint, { timeoutMs: this.options.checkTimeoutMs });
      if (!check.ok) return refused(check.code, check.message);
      this.remembered = { ...server, lastUsed: 'server' };
      try {
        await writeRemembered(this.file, this.remembered);
      } catch (err) {
        return refused('internal', `Could not remember the server: ${(err as Error).message}`);
      }
      await this.goToServer(`${server.origin}/`);
      return { ok: true, value: null };
    });
  }

  useThisComputer(): Promise<void> {
    return this.serially(async () => {
      await this.backHere(false);
      if (this.remembered?.lastUsed === 'server') {
        this.remembered = { ...this.remembered, lastUsed: 'local' };
        await writeRemembered(this.file, this.remembered);
      }
    });
  }

  forgetServer(): Promise<void> {
    return this.serially(async () => {
      await this.backHere(false);
      const server = this.remembered;
      this.remembered = null;
      this.unreachable = false;
      await deleteRemembered(this.file);
      if (server) await this.clearOrigin(server.origin);
      if (this.verifyInstalled) {
        this.options.session.setCertificateVerifyProc(null);
        this.verifyInstalled = false;
      }
    });
  }

  /**
   * did-fail-load: a main-frame page of the server that did not load (the server is off, its
   * certificate no longer the pinned one) brings the window back to this computer, saying so.
   */
  pageFailed(errorCode: number, url: string, isMainFrame: boolean): void {
    if (!isMainFrame || errorCode === ERR_ABORTED) return;
    const origin = this.serverOrigin();
    if (!origin || !url.startsWith(`${origin}/`)) return;
    this.options.log('warn', `the server's page did not load (error ${errorCode}); using this computer`);
    void this.serially(() => this.backHere(true)).catch((err: Error) => this.options.log('error', `could not come back to this computer: ${err.message}`));
  }

  private async goToServer(url: string): Promise<void> {
    if (!this.onServer) await this.options.stopHost();
    this.installVerify();
    this.onServer = true;
    this.unreachable = false;
    this.load(url);
  }

  /** The window on this computer's app again, its host started (when it was on the server). */
  private async backHere(unreachable: boolean): Promise<void> {
    this.unreachable = unreachable;
    if (!this.onServer) return;
    this.onServer = false;
    this.options.startHost();
    this.load(APP_ENTRY_URL);
  }

  private load(url: string): void {
    const window = this.options.window();
    if (!window || window.isDestroyed()) return;
    // A failure is reported by did-fail-load (pageFailed); the promise only says so again.
    window.loadURL(url).catch(() => {});
  }

  private installVerify(): void {
    if (this.verifyInstalled) return;
    this.options.session.setCertificateVerifyProc((request, callback) => callback(pinnedVerify(request, this.remembered)));
    this.verifyInstalled = true;
  }

  private async clearOrigin(origin: string): Promise<void> {
    try {
      await this.options.session.clearStorageData({ origin });
    } catch (err) {
      this.options.log('warn', `could not clear what the window kept for ${origin}: ${(err as Error).message}`);
    }
  }

  private now(): Date {
    return (this.options.now ?? (() => new Date()))();
  }

  private serially<T>(run: () => Promise<T>): Promise<T> {
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => {});
    return next;
  }
}
