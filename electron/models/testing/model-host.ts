// A stand-in for the Hugging Face hub on 127.0.0.1, for the downloader's tests and for e2e runs that
// point the app's model host setting at it. It serves `<root>/<org>/<name>/…` with the hub's paths:
//   GET /api/models/<org>/<name>/tree/main[/<dir>][?recursive=true]   JSON listing
//   GET /<org>/<name>/resolve/main/<path>                               the file (Range → 206)
// Weight files (.onnx, .onnx_data) are listed as LFS (sha256) and their resolve answers with a redirect
// to a second path, as the hub sends them to its CDN; other files carry the git blob sha1.
// Faults can be switched per file to reproduce what real networks and mirrors do.
// Node built-ins only, so a plain Node script (an e2e harness) can import it.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

export interface FileFault {
  /** Send this many body bytes of a response, then cut the connection. */
  dropAfterBytes?: number;
  /** How many responses are cut (default 1); Infinity cuts every one. */
  dropTimes?: number;
  /** Pause between the last byte and the cut (default 250 ms). */
  dropDelayMs?: number;
  /** The listing reports this size instead of the real one (hashes stay the real file's). */
  listedSize?: number;
  /** Serve the file with one byte flipped; the listing keeps the true hash. */
  corrupt?: boolean;
  /** Throttle the body to about this many bytes per second. */
  bytesPerSecond?: number;
  /** Answer Range requests with 200 and the whole file, as some mirrors and proxies do. */
  ignoreRange?: boolean;
  /** Answer the file's requests with this status and no body. */
  status?: number;
}

export interface HostRequest {
  method: string;
  /** Path and query as requested. */
  url: string;
  range?: string;
  status: number;
  /** `org/name/path` for file requests (resolve or CDN). */
  file?: string;
}

export interface ModelHostOptions {
  /** Folder holding `<org>/<name>/` model folders. */
  root: string;
  /** The server closes itself after this long, whatever the test does (default 10 minutes). */
  lifetimeMs?: number;
}

interface ListedFile {
  type: 'file' | 'directory';
  path: string;
  size: number;
  oid: string;
  lfs?: { oid: string; size: number; pointerSize: number };
}

const LFS_FILE = /\.(onnx|onnx_data)$/;
const SEGMENT = /^[\w][\w.-]*$/;

export class FakeModelHost {
  readonly requests: HostRequest[] = [];
  private readonly root: string;
  private readonly lifetimeMs: number;
  private server?: http.Server;
  private readonly sockets = new Set<Socket>();
  private readonly faults = new Map<string, FileFault>();
  private readonly drops = new Map<string, number>();
  private readonly missing = new Set<string>();
  private lifetime?: NodeJS.Timeout;
  private baseUrl = '';

  constructor(options: ModelHostOptions) {
    this.root = path.resolve(options.root);
    this.lifetimeMs = options.lifetimeMs ?? 10 * 60_000;
  }

  /** `http://127.0.0.1:<port>`, once started. */
  get url(): string {
    if (!this.baseUrl) throw new Error('The fake model host is not started.');
    return this.baseUrl;
  }

  async start(): Promise<string> {
    if (this.server) return this.url;
    const server = http.createServer((req, res) => {
      this.handle(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
    });
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // A forgotten close() must not keep a test process (or an e2e run) alive.
    this.lifetime = setTimeout(() => void this.close(), this.lifetimeMs);
    this.lifetime.unref();
    return this.baseUrl;
  }

  async close(): Promise<void> {
    clearTimeout(this.lifetime);
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Set (or with undefined, clear) the fault for one file of one model. */
  setFault(modelId: string, file: string, fault: FileFault | undefined): void {
    const key = `${modelId}/${file}`;
    this.drops.delete(key);
    if (fault) this.faults.set(key, fault);
    else this.faults.delete(key);
  }

  /** Answer 404 for the whole model, as the hub does for an unknown or misspelt id. */
  setMissing(modelId: string, missing = true): void {
    if (missing) this.missing.add(modelId);
    else this.missing.delete(modelId);
  }

  clearFaults(): void {
    this.faults.clear();
    this.drops.clear();
    this.missing.clear();
  }

  /** Requests for one file (`org/name/path`), resolve and CDN alike. */
  requestsFor(modelId: string, file: string): HostRequest[] {
    return this.requests.filter((r) => r.file === `${modelId}/${file}`);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const record: HostRequest = { method: req.method ?? 'GET', url: req.url ?? '/', status: 0 };
    if (typeof req.headers.range === 'string') record.range = req.headers.range;
    this.requests.push(record);
    const reply = (status: number, body?: unknown, headers: http.OutgoingHttpHeaders = {}) => {
      record.status = status;
      const text = body === undefined ? '' : JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
      res.end(text);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(405, { error: 'Method not allowed' });

    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    let parts: string[];
    try {
      parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    } catch {
      return reply(400, { error: 'Bad path' });
    }
    if (!parts.every((part) => SEGMENT.test(part))) return reply(400, { error: 'Bad path' });

    // /api/models/<org>/<name>/tree/main[/<dir>]
    if (parts[0] === 'api' && parts[1] === 'models' && parts[4] === 'tree' && parts[5] === 'main') {
      const modelId = `${parts[2]}/${parts[3]}`;
      const dir = await this.modelDir(modelId);
      if (!dir) return reply(404, { error: 'Repository not found' }, { 'x-error-code': 'RepoNotFound' });
      const listing = await this.list(modelId, dir, parts.slice(6).join('/'), url.searchParams.get('recursive') === 'true');
      if (!listing) return reply(404, { error: 'Entry not found' }, { 'x-error-code': 'EntryNotFound' });
      return reply(200, listing);
    }

    // /<org>/<name>/resolve/main/<path> and the CDN path it redirects weights to
    const cdn = parts[0] === '__cdn';
    const at = cdn ? parts.slice(1) : parts;
    if (at.length >= 5 && at[2] === 'resolve' && at[3] === 'main') {
      const modelId = `${at[0]}/${at[1]}`;
      const file = at.slice(4).join('/');
      record.file = `${modelId}/${file}`;
      const dir = await this.modelDir(modelId);
      if (!dir) return reply(404, { error: 'Repository not found' }, { 'x-error-code': 'RepoNotFound' });
      const full = path.join(dir, ...file.split('/'));
      const stat = await fs.stat(full).catch(() => undefined);
      if (!stat?.isFile()) return reply(404, { error: 'Entry not found' }, { 'x-error-code': 'EntryNotFound' });
      const fault = this.faults.get(record.file) ?? {};
      if (fault.status) return reply(fault.status, { error: 'Injected failure' });
      if (!cdn && LFS_FILE.test(file)) {
        record.status = 302;
        res.writeHead(302, {
          location: `/__cdn/${modelId}/resolve/main/${file}`,
          'x-linked-size': String(stat.size),
          'content-length': 0,
        });
        return void res.end();
      }
      return this.serveFile(req, res, record, full, stat.size, fault);
    }
    return reply(404, { error: 'Not found' });
  }

  private async serveFile(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    record: HostRequest,
    full: string,
    size: number,
    fault: FileFault,
  ): Promise<void> {
    let start = 0;
    let end = size - 1;
    let status = 200;
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    if (range && !fault.ignoreRange) {
      start = Number(range[1]);
      if (range[2]) end = Math.min(Number(range[2]), size - 1);
      if (start >= size || start > end) {
        record.status = 416;
        res.writeHead(416, { 'content-range': `bytes */${size}`, 'content-length': 0 });
        return void res.end();
      }
      status = 206;
    }
    const headers: http.OutgoingHttpHeaders = {
      'content-type': 'application/octet-stream',
      'content-length': end - start + 1,
      'accept-ranges': 'bytes',
    };
    if (status === 206) headers['content-range'] = `bytes ${start}-${end}/${size}`;
    record.status = status;
    res.writeHead(status, headers);
    if (req.method === 'HEAD' || end < start) return void res.end();

    const key = record.file ?? '';
    let dropAt: number | undefined;
    if (fault.dropAfterBytes !== undefined) {
      const done = this.drops.get(key) ?? 0;
      if (done < (fault.dropTimes ?? 1)) {
        this.drops.set(key, done + 1);
        dropAt = fault.dropAfterBytes;
      }
    }
    const bps = fault.bytesPerSecond;
    const chunkSize = bps ? Math.max(1, Math.min(16 * 1024, Math.floor(bps / 20))) : 64 * 1024;
    const corruptAt = fault.corrupt ? Math.floor(size / 2) : -1;
    const stream = createReadStream(full, { start, end, highWaterMark: chunkSize });
    let sent = 0;
    let offset = start;
    try {
      for await (const data of stream) {
        let chunk = data as Buffer;
        if (corruptAt >= offset && corruptAt < offset + chunk.length) {
          chunk = Buffer.from(chunk);
          chunk[corruptAt - offset] = (chunk[corruptAt - offset] ?? 0) ^ 0xff;
        }
        if (dropAt !== undefined && sent + chunk.length >= dropAt) {
          const part = chunk.subarray(0, dropAt - sent);
          if (part.length > 0) await write(res, part);
          // A fetch body that errors drops the chunks it had queued but not handed out yet, so the
          // cut waits until the client has surely read what was sent: tests can then predict the
          // Range of the retry.
          await delay(fault.dropDelayMs ?? 250, undefined, { ref: false });
          res.socket?.destroy();
          return;
        }
        if (res.destroyed) return;
        await write(res, chunk);
        sent += chunk.length;
        offset += chunk.length;
        if (bps) await delay((chunk.length / bps) * 1000, undefined, { ref: false });
      }
      res.end();
    } finally {
      stream.destroy();
    }
  }

  private async modelDir(modelId: string): Promise<string | undefined> {
    if (this.missing.has(modelId)) return undefined;
    const dir = path.join(this.root, ...modelId.split('/'));
    const stat = await fs.stat(dir).catch(() => undefined);
    return stat?.isDirectory() ? dir : undefined;
  }

  private async list(modelId: string, dir: string, under: string, recursive: boolean): Promise<ListedFile[] | undefined> {
    const base = under ? path.join(dir, ...under.split('/')) : dir;
    const stat = await fs.stat(base).catch(() => undefined);
    if (!stat?.isDirectory()) return undefined;
    const out: ListedFile[] = [];
    const walk = async (folder: string, prefix: string): Promise<void> => {
      const entries = (await fs.readdir(folder, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
      for (const entry of entries) {
        const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
        const full = path.join(folder, entry.name);
        if (entry.isDirectory()) {
          out.push({ type: 'directory', path: rel, size: 0, oid: gitBlobSha1(Buffer.from(rel)) });
          if (recursive) await walk(full, rel);
        } else if (entry.isFile()) {
          out.push(await this.describe(modelId, full, rel));
        }
      }
    };
    await walk(base, under);
    return out;
  }

  private async describe(modelId: string, full: string, rel: string): Promise<ListedFile> {
    const content = await fs.readFile(full);
    const size = this.faults.get(`${modelId}/${rel}`)?.listedSize ?? content.length;
    if (LFS_FILE.test(rel)) {
      const sha256 = createHash('sha256').update(content).digest('hex');
      const pointer = Buffer.from(`version https://git-lfs.github.com/spec/v1\noid sha256:${sha256}\nsize ${size}\n`);
      return { type: 'file', path: rel, size, oid: gitBlobSha1(pointer), lfs: { oid: sha256, size, pointerSize: pointer.length } };
    }
    return { type: 'file', path: rel, size, oid: gitBlobSha1(content) };
  }
}

/** Starts a fake model host serving `root`; close() it when done. */
export async function startModelHost(options: ModelHostOptions): Promise<FakeModelHost> {
  const host = new FakeModelHost(options);
  await host.start();
  return host;
}

/** The id git gives a file's content, which is what the hub lists as `oid` for files outside LFS. */
export function gitBlobSha1(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

function write(res: http.ServerResponse, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    res.write(chunk, (error) => (error ? reject(error) : resolve()));
  });
}
