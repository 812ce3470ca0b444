// A zip written as a stream into `<file>.partial`, renamed over `<file>` only once it is complete,
// flushed to disk and its central directory checked — a cancelled, failed or killed export never
// leaves a half file under the good name, and never replaces a good file with a worse one.
//
// The format is written here (local headers with data descriptors, deflate from node:zlib, the
// central directory) rather than by a zip library: Node's native deflate is about four times faster
// than a pure-JS one, which is most of an export's time. Classic zip only (no Zip64): 65,535 entries
// and 4 GiB per entry and in all, checked as it goes.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const MAX_ENTRIES = 0xffff;
const MAX_BYTES = 0xffff_ffff;
/** Bit 3: sizes and CRC follow the data; bit 11: the name is UTF-8. */
const FLAGS = 0x0808;
const DEFLATE = 8;
const VERSION = 20;

export class ArchiveTooLarge extends Error {}

export function partialPath(file: string): string {
  return `${file}.partial`;
}

// zlib.crc32 arrived in Node 20.15 / 22.2; older Node (engines allows 20.11) gets the table version.
const CRC_TABLE = new Int32Array(256).map((_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});
const crc32: (data: Uint8Array, value: number) => number =
  typeof (zlib as { crc32?: unknown }).crc32 === 'function'
    ? (data, value) => (zlib as unknown as { crc32: (d: Uint8Array, v: number) => number }).crc32(data, value)
    : (data, value) => {
        let c = ~value;
        for (let i = 0; i < data.length; i++) c = (CRC_TABLE[(c ^ (data[i] ?? 0)) & 0xff] ?? 0) ^ (c >>> 8);
        return ~c >>> 0;
      };

function dosTime(d: Date): { time: number; date: number } {
  const year = Math.min(Math.max(d.getFullYear(), 1980), 2107);
  return {
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | (d.getSeconds() >> 1),
    date: ((year - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
  };
}

interface Entry {
  name: Buffer;
  offset: number;
  crc: number;
  size: number;
  compressed: number;
  time: number;
  date: number;
}

export class ZipFileWriter {
  private entries: Entry[] = [];
  private open: { entry: Entry; deflate: zlib.DeflateRaw; pending: Buffer[]; ended: Promise<void>; failure: Error | null } | null = null;
  /** Bytes written to the partial file so far. */
  bytes = 0;

  private constructor(
    readonly file: string,
    private handle: fs.promises.FileHandle,
    private level: number,
  ) {}

  /** Opens `<file>.partial` (replacing a partial an earlier run left; never the file itself). */
  static async open(file: string, level = 6): Promise<ZipFileWriter> {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const handle = await fs.promises.open(partialPath(file), 'w', 0o600);
    return new ZipFileWriter(file, handle, level);
  }

  /** Starts an entry (writes its local header); the previous one must have been ended. */
  async begin(name: string, mtime: Date): Promise<void> {
    if (this.open) throw new Error(`zip: entry ${this.open.entry.name.toString()} is still open`);
    if (this.entries.length >= MAX_ENTRIES) throw new ArchiveTooLarge(`The archive would hold more than ${MAX_ENTRIES} files, more than a zip can list.`);
    const { time, date } = dosTime(mtime);
    const entry: Entry = { name: Buffer.from(name, 'utf8'), offset: this.bytes, crc: 0, size: 0, compressed: 0, time, date };
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(VERSION, 4);
    header.writeUInt16LE(FLAGS, 6);
    header.writeUInt16LE(DEFLATE, 8);
    header.writeUInt16LE(time, 10);
    header.writeUInt16LE(date, 12);
    // CRC and sizes (14–25) are zero here: the data descriptor after the data carries them.
    header.writeUInt16LE(entry.name.length, 26);
    header.writeUInt16LE(0, 28);
    await this.put([header, entry.name]);
    const deflate = zlib.createDeflateRaw({ level: this.level });
    const state = { entry, deflate, pending: [] as Buffer[], failure: null as Error | null, ended: Promise.resolve() };
    deflate.on('data', (chunk: Buffer) => {
      state.pending.push(chunk);
      entry.compressed += chunk.length;
    });
    state.ended = new Promise<void>((resolve) => {
      deflate.once('end', resolve);
      deflate.once('error', (err) => {
        state.failure = err;
        resolve();
      });
    });
    this.entries.push(entry);
    this.open = state;
  }

  /** Adds text (or bytes) to the open entry and writes what the compressor has produced so far. */
  async write(text: string | Uint8Array): Promise<void> {
    const open = this.open;
    if (!open) throw new Error('zip: no entry is open');
    const data = typeof text === 'string' ? Buffer.from(text, 'utf8') : Buffer.from(text.buffer, text.byteOffset, text.byteLength);
    open.entry.size += data.length;
    if (open.entry.size > MAX_BYTES) throw new ArchiveTooLarge(`${open.entry.name.toString()} would be larger than the 4 GB a zip entry can hold.`);
    open.entry.crc = crc32(data, open.entry.crc);
    if (!open.deflate.write(data)) await new Promise<void>((resolve) => open.deflate.once('drain', resolve));
    await this.drain();
  }

  /** Ends the open entry: the rest of its data, then its data descriptor. */
  async end(): Promise<void> {
    const open = this.open;
    if (!open) throw new Error('zip: no entry is open');
    open.deflate.end();
    await open.ended;
    if (open.failure) throw open.failure;
    await this.drain();
    this.open = null;
    const descriptor = Buffer.alloc(16);
    descriptor.writeUInt32LE(0x08074b50, 0);
    descriptor.writeUInt32LE(open.entry.crc >>> 0, 4);
    descriptor.writeUInt32LE(open.entry.compressed, 8);
    descriptor.writeUInt32LE(open.entry.size, 12);
    await this.put([descriptor]);
  }

  /** One whole entry. */
  async add(name: string, text: string | Uint8Array, mtime: Date): Promise<void> {
    await this.begin(name, mtime);
    await this.write(text);
    await this.end();
  }

  /**
   * Writes the central directory, flushes the file to disk, checks its end record lists every entry,
   * and only then renames `<file>.partial` over `<file>`. Returns the final size in bytes.
   */
  async finish(): Promise<number> {
    if (this.open) throw new Error('zip: an entry is still open');
    const start = this.bytes;
    const records: Buffer[] = [];
    for (const e of this.entries) {
      const r = Buffer.alloc(46);
      r.writeUInt32LE(0x02014b50, 0);
      r.writeUInt16LE(VERSION, 4);
      r.writeUInt16LE(VERSION, 6);
      r.writeUInt16LE(FLAGS, 8);
      r.writeUInt16LE(DEFLATE, 10);
      r.writeUInt16LE(e.time, 12);
      r.writeUInt16LE(e.date, 14);
      r.writeUInt32LE(e.crc >>> 0, 16);
      r.writeUInt32LE(e.compressed, 20);
      r.writeUInt32LE(e.size, 24);
      r.writeUInt16LE(e.name.length, 28);
      // extra, comment, disk, internal attributes, external attributes: 0
      r.writeUInt32LE(e.offset, 42);
      records.push(r, e.name);
    }
    await this.put(records);
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(this.entries.length, 8);
    end.writeUInt16LE(this.entries.length, 10);
    end.writeUInt32LE(this.bytes - start, 12);
    end.writeUInt32LE(start, 16);
    await this.put([end]);
    await this.handle.sync();
    await this.handle.close();
    const partial = partialPath(this.file);
    verifyEnd(partial, this.entries.length);
    fs.renameSync(partial, this.file);
    syncDir(path.dirname(this.file));
    return this.bytes;
  }

  /** Stops writing and removes the partial file; the file under the real name is left as it was. */
  async abort(): Promise<void> {
    this.open?.deflate.destroy();
    this.open = null;
    await this.handle.close().catch(() => {});
    fs.rmSync(partialPath(this.file), { force: true });
  }

  private async drain(): Promise<void> {
    const open = this.open;
    if (!open?.pending.length) return;
    const chunks = open.pending;
    open.pending = [];
    await this.put(chunks);
  }

  private async put(chunks: Buffer[]): Promise<void> {
    const size = chunks.reduce((n, c) => n + c.length, 0);
    if (this.bytes + size > MAX_BYTES) throw new ArchiveTooLarge('The archive would be larger than the 4 GB a zip can hold.');
    await this.handle.writev(chunks);
    this.bytes += size;
  }
}

/** The end-of-central-directory record must close the file and count every entry we added. */
function verifyEnd(file: string, entries: number): void {
  const size = fs.statSync(file).size;
  const fd = fs.openSync(file, 'r');
  try {
    const tail = Buffer.alloc(22);
    fs.readSync(fd, tail, 0, 22, size - 22);
    if (tail.readUInt32LE(0) !== 0x06054b50) throw new Error('zip: the written archive has no end record');
    if (tail.readUInt16LE(10) !== entries) throw new Error(`zip: the written archive lists ${tail.readUInt16LE(10)} files, not ${entries}`);
  } finally {
    fs.closeSync(fd);
  }
}

function syncDir(dir: string): void {
  try {
    const fd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Not every platform can fsync a directory (Windows); the rename itself is what matters.
  }
}
