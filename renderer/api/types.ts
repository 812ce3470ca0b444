import type { AnimaClient } from '../../shared/api.js';

/** closed: the server refused the stream (e.g. it restarted with a new token); it will not retry. */
export type ConnectionState = 'connecting' | 'open' | 'reconnecting' | 'closed';

/**
 * What the renderer talks to: the shared contract plus the two things only a transport knows —
 * whether the event stream is live, and when it came back after a gap (events may have been lost).
 */
export interface RendererClient extends AnimaClient {
  readonly transport: 'ipc' | 'http';
  /** Called on every (re)connect of the event stream; the first call is the initial connect. */
  onConnect(listener: (reconnected: boolean) => void): () => void;
  onConnectionState(listener: (state: ConnectionState) => void): () => void;
  readonly connectionState: ConnectionState;
  /** Open a web link outside the app (system browser in Electron, a new tab in browser mode). */
  openExternal(url: string): void;
  /**
   * Browser mode: the address a link downloads a finished export from (its file name, as in
   * ArchiveExportStatus), token included. The desktop app has none: the file is shown where it is.
   */
  exportDownloadUrl?(fileName: string): string;
}
