// Browser mode's address, kept per data folder in `<dataDir>/browser-link.json` (owner-only, like
// secrets.json): the port it was last served on and its token, and the LAN listener's port once it
// has had one (a paired phone keeps its token per address, so the LAN port must not wander either). A restart on the same folder serves
// the same address with the same token, so an open tab reconnects by itself; the token changes only
// when the person resets the link in Settings (every open tab is then refused and says so).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

export const LINK_FILE = 'browser-link.json';

interface Stored {
  port: number | null;
  token: string;
  /** Absent until `--listen` first served. */
  lanPort?: number;
}

const newToken = () => randomBytes(32).toString('base64url');
const isPort = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v > 0 && v <= 65535;
const isToken = (v: unknown): v is string => typeof v === 'string' && /^[\w-]{32,256}$/.test(v);

export class BrowserLink {
  private stored: Stored | null = null;
  private readonly listeners = new Set<(token: string) => void>();

  constructor(
    readonly dataDir: string,
    private readonly log: (level: 'warn', message: string) => void = () => {},
  ) {}

  private get file(): string {
    return path.join(this.dataDir, LINK_FILE);
  }

  /** Reads the folder's link; a missing or unreadable file gets a new token (said in the log when unreadable). */
  async load(): Promise<void> {
    let raw: unknown;
    try {
      raw = JSON.parse(await fs.readFile(this.file, 'utf8'));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        this.log('warn', `serve: ${LINK_FILE} could not be read (${(err as Error).message}); a new link is made`);
    }
    const r = (raw ?? {}) as Partial<Stored>;
    const lanPort = isPort(r.lanPort) ? { lanPort: r.lanPort } : {};
    if (isToken(r.token)) {
      this.stored = { port: isPort(r.port) ? r.port : null, token: r.token, ...lanPort };
    } else {
      this.stored = { port: isPort(r.port) ? r.port : null, token: newToken(), ...lanPort };
      await this.write();
    }
  }

  private get current(): Stored {
    if (!this.stored) throw new Error('BrowserLink.load() first');
    return this.stored;
  }

  get token(): string {
    return this.current.token;
  }

  /** The port this folder was last served on; null the first time. */
  get port(): number | null {
    return this.current.port;
  }

  async rememberPort(port: number): Promise<void> {
    if (this.current.port === port) return;
    this.current.port = port;
    await this.write();
  }

  /** The port the LAN listener (`--listen`) last served on; null until it has served. */
  get lanPort(): number | null {
    return this.current.lanPort ?? null;
  }

  async rememberLanPort(port: number): Promise<void> {
    if (this.current.lanPort === port) return;
    this.current.lanPort = port;
    await this.write();
  }

  /** A new token: the old one is refused from now on (open tabs included). Returns the new one. */
  async reset(): Promise<string> {
    this.current.token = newToken();
    await this.write();
    for (const listener of this.listeners) listener(this.current.token);
    return this.current.token;
  }

  onReset(listener: (token: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Written aside and renamed: a crash leaves the old file or the new one, never half of one. */
  private async write(): Promise<void> {
    const tmp = `${this.file}.${process.pid}.tmp`;
    await fs.writeFile(tmp, `${JSON.stringify(this.current)}\n`, { mode: 0o600 });
    await fs.rename(tmp, this.file);
  }
}
