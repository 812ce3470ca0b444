// What the Electron preload exposes as window.anima. The preload's object `satisfies` this, and the
// renderer's IPC transport is typed by it. Callbacks never receive a raw IPC event.
import type { ApiErrorShape } from './api.js';

export type BridgeReply = { ok: true; value: unknown } | { ok: false; error: ApiErrorShape };

export interface AnimaBridge {
  /** Call a host API method; resolves with a reply, never rejects for API errors. */
  invoke(method: string, input: unknown): Promise<BridgeReply>;
  /** Listen for host events (name + JSON payload). Returns an unsubscribe function. */
  onEvent(listener: (name: string, payload: unknown) => void): () => void;
  /** Open an http(s) URL in the system browser (main checks it). */
  openExternal(url: string): Promise<void>;
}

declare global {
  interface Window {
    anima?: AnimaBridge;
  }
}
