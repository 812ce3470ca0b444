// Messages between main and the host's utility process (process.parentPort ↔ UtilityProcess).
// Renderer traffic never passes here: each window talks to the host over its own MessagePort.
import type { SecretCipher } from './os-encrypted-secrets.js';

export type SecretStorageKind = 'os-encrypted' | 'owner-only-file';

/** main → host */
export type ToHost =
  | { type: 'init'; dataDir: string; secretStorage: SecretStorageKind }
  /** Carries one MessagePort (in `ports`): a new renderer to serve. */
  | { type: 'connect' }
  | { type: 'close' }
  | { type: 'cipher-result'; id: number; ok: true; value: string }
  | { type: 'cipher-result'; id: number; ok: false; message: string };

/** host → main */
export type FromHost =
  { type: 'ready' } | { type: 'failed'; message: string } | { type: 'closed' } | { type: 'cipher'; id: number; op: 'encrypt' | 'decrypt'; value: string };

export function isMessage<T extends { type: string }>(data: unknown): data is T {
  return !!data && typeof data === 'object' && typeof (data as { type?: unknown }).type === 'string';
}

/** A keychain prompt on macOS may wait for the user; past this, give up rather than hang a save. */
export const CIPHER_TIMEOUT_MS = 60_000;

/**
 * The host side of the safeStorage round trip. `post` sends to main; main's replies are fed to
 * `receive`.
 */
export function createCipherClient(post: (message: FromHost) => void, timeoutMs = CIPHER_TIMEOUT_MS) {
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: string) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();

  function request(op: 'encrypt' | 'decrypt', value: string): Promise<string> {
    const id = nextId++;
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`the OS keychain did not answer within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      timer.unref?.();
      pending.set(id, { resolve, reject, timer });
      post({ type: 'cipher', id, op, value });
    });
  }

  const cipher: SecretCipher = {
    encrypt: (plain) => request('encrypt', plain),
    decrypt: (cipherBase64) => request('decrypt', cipherBase64),
  };

  function receive(message: Extract<ToHost, { type: 'cipher-result' }>): void {
    const entry = pending.get(message.id);
    if (!entry) return;
    pending.delete(message.id);
    clearTimeout(entry.timer);
    if (message.ok) entry.resolve(message.value);
    else entry.reject(new Error(message.message));
  }

  return { cipher, receive };
}

/** The main side: what safeStorage offers, reduced to the two calls the host needs. */
export interface SafeStorageLike {
  encryptString(plain: string): Buffer;
  decryptString(encrypted: Buffer): string;
}

export function answerCipherRequest(safeStorage: SafeStorageLike, message: Extract<FromHost, { type: 'cipher' }>): Extract<ToHost, { type: 'cipher-result' }> {
  try {
    const value =
      message.op === 'encrypt' ? safeStorage.encryptString(message.value).toString('base64') : safeStorage.decryptString(Buffer.from(message.value, 'base64'));
    return { type: 'cipher-result', id: message.id, ok: true, value };
  } catch (err) {
    return { type: 'cipher-result', id: message.id, ok: false, message: (err as Error).message };
  }
}
