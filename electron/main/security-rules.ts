// The security rules of the desktop app as pure functions, so each one is unit-tested without Electron.
// security.ts wires them to Electron once. Rule numbers refer to Electron's security
// checklist (https://www.electronjs.org/docs/latest/tutorial/security).
//
// This module must not import `electron`: it is type-checked by the root tsconfig too, and tested in
// plain Node. The event shapes below are the parts of Electron's types we rely on.
import path from 'node:path';

import { APP_HOST, APP_SCHEME, isAppUrl, parseUrl } from './app-url.js';

export { APP_ENTRY_URL, APP_HOST, APP_ORIGIN, APP_SCHEME, isAppUrl } from './app-url.js';

/** Checklist #7: a strict CSP on every app:// response (index.html also carries one as a meta tag). */
export { CONTENT_SECURITY_POLICY } from '../../shared/csp.js';

/** `.` or `..` as a whole path segment, in any spelling: never part of a legitimate asset URL. */
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?=[/?#]|$)/i;

/**
 * Map an app:// request to a file under `rootDir`, or null when it must not be served.
 * The URL parser would quietly fold `..` and `%2e%2e` segments, so a request that contains one is
 * refused before parsing rather than silently served something else. Only after decoding do `%2f`,
 * `%5c` and `%00` show up, so the decoded path is checked again, and the resolved file must stay
 * inside the root whatever the platform's path rules are.
 */
export function resolveAppPath(rootDir: string, requestUrl: string): string | null {
  if (/[\\\0]/.test(requestUrl) || DOT_SEGMENT.test(requestUrl)) return null;
  const url = parseUrl(requestUrl);
  if (!url || url.protocol !== `${APP_SCHEME}:` || url.host !== APP_HOST) return null;

  let relative: string;
  try {
    relative = decodeURIComponent(url.pathname);
  } catch {
    return null; // malformed percent-encoding
  }
  if (relative === '' || relative === '/') relative = '/index.html';
  if (/[\\\0:]/.test(relative)) return null; // backslashes, null bytes, drive letters and streams
  const segments = relative.split('/').slice(1);
  if (segments.some((s) => s === '..' || s === '.' || s === '')) return null;

  const root = path.resolve(rootDir);
  const resolved = path.resolve(root, ...segments);
  const inside = path.relative(root, resolved);
  if (!inside || inside.startsWith('..') || path.isAbsolute(inside)) return null;
  return resolved;
}

/**
 * The pages the window may show: our own app:// pages, or — only while the window is on the person's
 * paired Anima server (`serverOrigin`, `https://host:port`) — that origin's pages, and nothing else.
 */
export function isWindowPage(raw: string, serverOrigin: string | null): boolean {
  if (serverOrigin === null) return isAppUrl(raw);
  const url = parseUrl(raw);
  return !!url && url.protocol === 'https:' && url.origin === serverOrigin && !url.username && !url.password;
}

/** Checklist #13: the window only ever shows our own pages (or the paired server's while it is on it). */
export function isAllowedNavigation(targetUrl: string, serverOrigin: string | null = null): boolean {
  return isWindowPage(targetUrl, serverOrigin);
}

/**
 * Checklist #15: what may be handed to shell.openExternal — http(s) only, and never a URL carrying
 * credentials (a classic way to disguise where a link really goes). Returns the normalized URL.
 */
export function checkExternalUrl(raw: unknown): string | null {
  if (typeof raw !== 'string' || raw.length > 2048) return null;
  const url = parseUrl(raw.trim());
  if (!url) return null;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username || url.password || !url.hostname) return null;
  return url.href;
}

/**
 * Checklist #5: permissions are denied unless listed. The clipboard write lets the renderer's copy
 * buttons work; it is granted to our own pages only.
 */
const ALLOWED_PERMISSIONS: ReadonlySet<string> = new Set(['clipboard-sanitized-write']);

export function isPermissionAllowed(permission: string, requestingUrl: string | undefined, serverOrigin: string | null = null): boolean {
  return ALLOWED_PERMISSIONS.has(permission) && !!requestingUrl && isWindowPage(requestingUrl, serverOrigin);
}

// ---------------------------------------------------------------------------------------------
// IPC: one registration wrapper that checks every sender (checklist #17)
// ---------------------------------------------------------------------------------------------

/** The parts of Electron's WebFrameMain the sender check reads. */
export interface SenderFrameLike {
  readonly url: string;
  readonly parent: unknown;
}

/** The parts of Electron's IpcMainInvokeEvent the sender check reads. */
export interface IpcEventLike {
  readonly sender: { readonly id: number };
  readonly senderFrame: SenderFrameLike | null;
}

export interface IpcMainLike<E extends IpcEventLike> {
  handle(channel: string, listener: (event: E, ...args: unknown[]) => unknown): void;
}

/**
 * A message may come only from the top frame of one of our windows, showing our own page (or, for
 * the channels that allow it, `isOurPage`: the paired server's page while the window is on it).
 * A destroyed frame (null), a subframe, or a page that somehow navigated elsewhere is refused.
 */
export function isTrustedSender(event: IpcEventLike, isOurWebContents: (id: number) => boolean, isOurPage: (url: string) => boolean = isAppUrl): boolean {
  const frame = event.senderFrame;
  if (!frame || frame.parent) return false;
  if (!isOurWebContents(event.sender.id)) return false;
  return isOurPage(frame.url);
}

export class UntrustedSenderError extends Error {
  constructor(channel: string) {
    super(`Refused ${channel}: the message did not come from Anima's own window.`);
    this.name = 'UntrustedSenderError';
  }
}

/**
 * Returns the only function through which main registers an IPC handler. Handlers receive the
 * arguments alone: they never need the event, and so cannot forget to check it.
 */
export function createIpcHandle<E extends IpcEventLike>(
  ipcMain: IpcMainLike<E>,
  isOurWebContents: (id: number) => boolean,
  onRefused: (channel: string, event: E) => void = () => {},
  isOurPage: (url: string) => boolean = isAppUrl,
) {
  return function handle(channel: string, handler: (...args: unknown[]) => unknown): void {
    ipcMain.handle(channel, (event: E, ...args: unknown[]) => {
      if (!isTrustedSender(event, isOurWebContents, isOurPage)) {
        onRefused(channel, event);
        throw new UntrustedSenderError(channel);
      }
      return handler(...args);
    });
  };
}
