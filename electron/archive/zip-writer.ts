// A zip written as a stream into `<file>.partial`, renamed over `<file>` only once it is complete,
// flushed to disk and its central directory checked — a cancelled, failed or killed export never
// leaves a half file under the good name, and never replaces a good file with a worse one.
import fs from 'node:fs';
import path from 'node:path';
import { Zip, ZipDeflate } from 'fflate';

/** fflate writes classic zips (no Zip64): 65,535 entries and 4 GiB per entry and in all. */
const MAX_ENTRIES = 65_535;
const MAX_BYTES = 0xffff_ffff;

export class ArchiveTooLarge extends Error {}

export function partialPath(file: string): string {
  return `${file}.partial`;
}

export class ZipFileWriter {
  private zip: Zip;
  private pending: Uint8Array[] = [];
  private failure: Error | null = null;
  private ended = false;
  private entries = 0;
  private entry: { file: ZipDeflate; bytes: number } | null = null;
  /** Bytes written to the partial file so far. */
  bytes = 0;

  private constructor(
    readonly file: string,
    private handle: fs.promises.FileHandle,
    private level: 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9,
  ) {
    this.zip = new Zip((err, chunk, final) => {
      if (err) this.failure = err;
      else {
        this.pending.push(chunk);
        if (final) this.ended = true;
      }
    });
  }

  /** Opens `<file>.partial` (replacing a partial an earlier run left; never the file itself). */
  static async open(file: string, level: 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 = 6): Promise<ZipFileWriter> {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const handle = await fs.promises.open(partialPath(file), 'w', 0o600);
    return new ZipFileWriter(file, handle, level);
  }

  /** Starts an entry; the previous one must have been ended. */
  begin(name: string, mtime: Date): void {
    if (this.entry) throw new Error(`zip: entry ${this.entry.file.filename} is still open`);
    if (++this.entries > MAX_ENTRIES) throw new ArchiveTooLarge(`The archive would hold more than ${MAX_ENTRIES} files, more than a zip can list.`);
    const file = new ZipDeflate(name, { level: this.level });
    file.mtime = mtime;
    this.zip.add(file);
    this.entry = { file, bytes: 0 };
  }

  /** Adds text to the open entry and writes what the compressor produced. */
  async write(text: string): Promise<void> {
    if (!this.entry) throw new Error('zip: no entry is open');
    const data = Buffer.from(text, 'utf8');
    this.entry.bytes += data.length;
    if (this.entry.bytes > MAX_BYTES) throw new ArchiveTooLarge(`${this.entry.file.filename} would be larger than the 4 GB a zip entry can hold.`);
    this.entry.file.push(data);
    await this.flush();
  }

  async end(): Promise<void> {
    if (!this.entry) throw new Error('zip: no entry is open');
    this.entry.file.push(new Uint8Array(0), true);
    this.entry = null;
    await this.flush();
  }

  /** One whole entry. */
  async add(name: string, text: string, mtime: Date): Promise<void> {
    this.begin(name, mtime);
    await this.write(text);
    await this.end();
  }

  /**
   * Ends the zip, flushes it to disk, checks its end record lists every entry, and only then renames
   * `<file>.partial` over `<file>`. Returns the final size in bytes.
   */
  async finish(): Promise<number> {
    this.zip.end();
    await this.flush();
    if (!this.ended) throw new Error('zip: the archive did not end');
    await this.handle.sync();
    await this.handle.close();
    const partial = partialPath(this.file);
    verifyEnd(partial, this.entries);
    fs.renameSync(partial, this.file);
    syncDir(path.dirname(this.file));
    return this.bytes;
  }

  /** Stops writing and removes the partial file; the file under the real name is left as it was. */
  async abort(): Promise<void> {
    this.zip.terminate();
    await this.handle.close().catch(() => {});
    fs.rmSync(partialPath(this.file), { force: true });
  }

  private async flush(): Promise<void> {
    if (this.failure) throw this.failure;
    while (this.pending.length) {
      const chunks = this.pending;
      this.pending = [];
      const size = chunks.reduce((n, c) => n + c.length, 0);
      if (this.bytes + size > MAX_BYTES) throw new ArchiveTooLarge('The archive would be larger than the 4 GB a zip can hold.');
      await this.handle.writev(chunks);
      this.bytes += size;
    }
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
