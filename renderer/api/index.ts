// Picks the transport once at start and hands the same client to every store.
import { createHttpClient } from './http.js';
import { createIpcClient } from './ipc.js';
import { pairingFromHash, takeToken } from './token.js';
import type { RendererClient } from './types.js';

export type { RendererClient, ConnectionState } from './types.js';

let current: RendererClient | null = null;

export type StartResult = { ok: true; client: RendererClient } | { ok: false; reason: 'no-token' | 'pair' };

export function startClient(): StartResult {
  if (current) return { ok: true, client: current };
  if (window.anima) {
    current = createIpcClient(window.anima);
    return { ok: true, client: current };
  }
  // Opened from a pairing code (Settings → Devices): the pair page first, even on a device paired before.
  if (pairingFromHash(window.location.hash)) return { ok: false, reason: 'pair' };
  const token = takeToken({
    href: window.location.href,
    storage: window.sessionStorage,
    replaceUrl: (url) => window.history.replaceState(window.history.state, '', url),
    deviceStorage: safeLocalStorage(),
  });
  if (!token) return { ok: false, reason: 'no-token' };
  current = createHttpClient({
    token,
    createEventSource: (url) => new EventSource(url),
    openExternal: (url) => {
      window.open(url, '_blank', 'noopener,noreferrer');
    },
  });
  return { ok: true, client: current };
}

function safeLocalStorage(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined;
  }
}

/** The client chosen at start; stores call through this. */
export function api(): RendererClient {
  if (!current) throw new Error('The API client is used before startClient()');
  return current;
}

/** Tests and previews can install their own client. */
export function setClient(client: RendererClient | null): void {
  current = client;
}
