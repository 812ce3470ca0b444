// API keys in the desktop app: only ciphertext reaches the disk. The key lives in the OS keychain
// (Electron safeStorage), which only main can use — so the utility process asks main to encrypt and
// decrypt (see parent-channel.ts) and keeps `${dataDir}/secrets.json` itself.
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SecretStore } from '../settings/secrets.js';
import type { Log } from './port-server.js';

export interface SecretCipher {
  /** Plain text in, base64 ciphertext out. */
  encrypt(plain: string): Promise<string>;
  decrypt(cipherBase64: string): Promise<string>;
}

const FORMAT = 'anima-secrets/os-encrypted';

interface SecretsFile {
  format: typeof FORMAT;
  version: 1;
  secrets: Record<string, string>;
}

export const SECRETS_FILE_NAME = 'secrets.json';

export class OsEncryptedSecretStore implements SecretStore {
  readonly kind = 'os-encrypted' as const;
  private readonly file: string;
  /** Every read-modify-write runs after the previous one, so two saves never lose each other. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    dataDir: string,
    private readonly cipher: SecretCipher,
    private readonly log: Log = () => {},
  ) {
    this.file = path.join(dataDir, SECRETS_FILE_NAME);
  }

  get(name: string): Promise<string | undefined> {
    return this.serial(async () => {
      const stored = (await this.read()).secrets[name];
      if (stored === undefined) return undefined;
      try {
        return await this.cipher.decrypt(stored);
      } catch (err) {
        // The keychain entry changed (new OS account, restored backup): the key must be entered again.
        this.log('warn', `could not decrypt the stored secret "${name}": ${(err as Error).message}`);
        return undefined;
      }
    });
  }

  set(name: string, value: string): Promise<void> {
    return this.serial(async () => {
      const data = await this.read();
      data.secrets[name] = await this.cipher.encrypt(value);
      await this.write(data);
    });
  }

  delete(name: string): Promise<void> {
    return this.serial(async () => {
      const data = await this.read();
      if (!(name in data.secrets)) return;
      delete data.secrets[name];
      await this.write(data);
    });
  }

  private serial<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => {});
    return run;
  }

  private async read(): Promise<SecretsFile> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return empty();
      throw err;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null; // damaged
    }
    if (isOurs(parsed)) {
      const secrets: Record<string, string> = Object.create(null);
      for (const [k, v] of Object.entries(parsed.secrets)) if (typeof v === 'string') secrets[k] = v;
      return { format: FORMAT, version: 1, secrets };
    }
    if (isPlainStringMap(parsed)) return this.encryptPlainFile(parsed);
    // Never overwrite a file we do not understand (another store's format, a damaged file): keep a copy.
    const aside = `${this.file}.unreadable-${Date.now()}`;
    await rename(this.file, aside);
    this.log('warn', `${SECRETS_FILE_NAME} was not in the expected format; moved it to ${path.basename(aside)} — API keys must be entered again`);
    return empty();
  }

  /**
   * The owner-only-file store (used when the keychain was unavailable, and in browser mode) keeps
   * plain text in this same file. Once the keychain works, those keys are encrypted in place, so
   * no plain-text copy stays behind.
   */
  private async encryptPlainFile(plain: Record<string, string>): Promise<SecretsFile> {
    const data = empty();
    for (const [name, value] of Object.entries(plain)) data.secrets[name] = await this.cipher.encrypt(value);
    await this.write(data);
    const count = Object.keys(plain).length;
    if (count > 0) this.log('info', `encrypted ${count} API key(s) that were kept in plain text with the OS keychain`);
    return data;
  }

  private async write(data: SecretsFile): Promise<void> {
    await mkdir(path.dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
    await chmod(tmp, 0o600); // the mode above is masked by umask
    await rename(tmp, this.file);
  }
}

function empty(): SecretsFile {
  return { format: FORMAT, version: 1, secrets: Object.create(null) as Record<string, string> };
}

function isOurs(value: unknown): value is SecretsFile {
  if (!value || typeof value !== 'object') return false;
  const v = value as Partial<SecretsFile>;
  return v.format === FORMAT && !!v.secrets && typeof v.secrets === 'object';
}

function isPlainStringMap(value: unknown): value is Record<string, string> {
  return !!value && typeof value === 'object' && !Array.isArray(value) && !('format' in value) && Object.values(value).every((v) => typeof v === 'string');
}
