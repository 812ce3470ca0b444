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
    animaDesktop?: DesktopShell;
  }
}

/**
 * The desktop window as a client of the person's own Anima server (Settings → Devices → "Use my
 * Anima server"). The preload exposes it as window.animaDesktop on every page of the desktop window —
 * our own app:// page and the paired server's pages — and window.anima only on our own page, so a
 * server's page never reaches this computer's host. A browser (or a phone) has neither.
 */
export interface DesktopShell {
  /** Where this window's app is: this computer's host, or a paired server. */
  where(): Promise<DesktopWhere>;
  /**
   * Checks a pairing link (`https://<address>:<port>/#pair=<secret>&fp=<64 hex>`, as Settings →
   * Devices shows it under the QR code), reaches the server with its certificate pinned to that
   * fingerprint, remembers the server, stops this computer's host (its data stays untouched) and loads
   * the link in this window, where the server's pair page pairs this app as a device. Refuses with a
   * code the renderer chooses words for: `invalid_link`, `server_unreachable`, `certificate_mismatch`.
   */
  useServer(link: string): Promise<BridgeReply>;
  /** Opens the remembered (already paired) server again; the same refusals as useServer. */
  reopenServer(): Promise<BridgeReply>;
  /** Back to this computer's own data: its host starts again and the window loads the app. The server stays remembered. */
  useThisComputer(): Promise<void>;
  /** Forgets the remembered server and clears what the window kept for its origin (the device token). */
  forgetServer(): Promise<void>;
}

export interface RememberedServer {
  /** `https://<address>:<port>` */
  origin: string;
  /** The pinned certificate's SHA-256 fingerprint, colon hex (AB:CD:…). */
  fingerprint: string;
  /** When it was first used (ISO 8601). */
  since: string;
}

export type DesktopWhere =
  | { kind: 'local'; server: RememberedServer | null; /** The app started on the server and it did not answer. */ serverUnreachable?: boolean }
  | { kind: 'server'; server: RememberedServer };
