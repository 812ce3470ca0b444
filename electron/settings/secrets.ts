// The browser-mode secret store: a JSON file readable only by this user account. Not encrypted —
// Settings says so. The desktop app uses an OS-encrypted store instead (host-process/).
import fs from 'node:fs';
import path from 'node:path';

/** Where API keys live. Never the database, never a log. */
export interface SecretStore {
  /** 'os-encrypted' in the desktop app (Electron safeStorage), 'owner-only-file' in browser mode. */
  readonly kind: 'os-encrypted' | 'owner-only-file';
  get(name: string): Promise<string | undefined>;
  set(name: string, value: string): Promise<void>;
  delete(name: string): Promise<void>;
}

// Its own file: the desktop app's secrets.json holds OS-encrypted ciphertext this mode cannot read.
export const SECRETS_FILE = 'secrets-browser.json';

export class OwnerOnlyFileSecretStore implements SecretStore {
  readonly kind = 'owner-only-file' as const;
  private readonly file: string;

  constructor(
    dataDir: string,
    private readonly onCorrupt?: (message: string) => void,
  ) {
    this.file = path.join(dataDir, SECRETS_FILE);
  }

  private read(): Record<string, string> {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw err;
    }
    try {
      const data = JSON.parse(text) as unknown;
      if (data && typeof data === 'object' && !Array.isArray(data)) {
        return Object.fromEntries(Object.entries(data).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
      }
    } catch {
      // fall through
    }
    this.onCorrupt?.('The file with your saved API keys was unreadable; please enter your keys again in Settings → Models.');
    return {};
  }

  private write(data: Record<string, string>): void {
    // Write-then-rename so a crash never leaves half a file; 0600 before any secret is in it.
    const tmp = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(data), { mode: 0o600 });
    fs.chmodSync(tmp, 0o600);
    fs.renameSync(tmp, this.file);
  }

  async get(name: string): Promise<string | undefined> {
    return this.read()[name];
  }

  async set(name: string, value: string): Promise<void> {
    this.write({ ...this.read(), [name]: value });
  }

  async delete(name: string): Promise<void> {
    const data = this.read();
    if (!(name in data)) return;
    delete data[name];
    this.write(data);
  }
}
