// The host's life inside Electron's utility process, written against the shapes of parentPort and
// MessagePortMain so it can be tested in plain Node. entry.ts supplies the real ones.
import type { Host, HostOptions } from '../host/types.js';
import type { SecretStore } from '../settings/secrets.js';
import { OsEncryptedSecretStore } from './os-encrypted-secrets.js';
import { createCipherClient, isMessage, type FromHost, type ToHost } from './parent-channel.js';
import { wireFromEmitterPort, type EmitterPortLike } from './port-protocol.js';
import { serveHost, type Log } from './port-server.js';

export interface ParentPortLike {
  on(event: 'message', listener: (event: { data: unknown; ports: readonly unknown[] }) => void): unknown;
  postMessage(message: unknown): void;
}

export interface RunDeps {
  parentPort: ParentPortLike;
  createHost(options: HostOptions): Promise<Host>;
  log: Log;
  /** Leaves the process once the host has closed. */
  exit(code: number): void;
}

export function runHostProcess({ parentPort, createHost, log, exit }: RunDeps): void {
  const post = (message: FromHost) => parentPort.postMessage(message);
  const cipherClient = createCipherClient(post);

  // Windows may connect before init arrives; they wait on this.
  let started!: (creating: Promise<Host>) => void;
  const host = new Promise<Host>((resolve, reject) => {
    started = (creating) => creating.then(resolve, reject);
  });
  host.catch(() => {}); // a failed start is reported to main and to each request, not as unhandled
  let initialised = false;
  let closing: Promise<void> | null = null;

  function init(dataDir: string, secretStorage: 'os-encrypted' | 'owner-only-file'): void {
    if (initialised) return;
    initialised = true;
    let secrets: SecretStore | undefined;
    if (secretStorage === 'os-encrypted') {
      secrets = new OsEncryptedSecretStore(dataDir, cipherClient.cipher, log);
    } else {
      log('warn', 'the OS keychain is not available: API keys are kept in a file only this user can read');
    }
    const creating = createHost({ dataDir, mode: 'electron', secrets, log });
    started(creating);
    creating.then(
      () => post({ type: 'ready' }),
      (err: unknown) => {
        log('error', `the host could not start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
        post({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
      },
    );
  }

  function close(): Promise<void> {
    closing ??= (async () => {
      const running = initialised ? await host.catch(() => null) : null;
      try {
        await running?.close();
      } catch (err) {
        log('error', `closing the host failed: ${(err as Error).message}`);
      }
      post({ type: 'closed' });
      exit(0);
    })();
    return closing;
  }

  parentPort.on('message', ({ data, ports }) => {
    if (!isMessage<ToHost>(data)) return;
    switch (data.type) {
      case 'init':
        init(data.dataDir, data.secretStorage);
        break;
      case 'connect': {
        const port = ports[0] as EmitterPortLike | undefined;
        if (port && !closing) serveHost(host, wireFromEmitterPort(port), log);
        break;
      }
      case 'close':
        void close();
        break;
      case 'cipher-result':
        cipherClient.receive(data);
        break;
    }
  });
}
