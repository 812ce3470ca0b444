// Headless commands. `serve` runs the whole app in browser mode: the host plus the HTTP + SSE
// bridge on 127.0.0.1, printing the one URL (with its per-run token) to open.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { ApiError, IMPORT_CHUNK_BYTES, MAX_IMPORT_BYTES, type ImportPreview, type ImportProgress } from '../shared/api.js';
import { exportFolder } from './archive/export-folder.js';
import { describeEnd, migrateStore, parseStoreEnd } from './archive/migrate-store.js';
import { defaultDataDir } from './host/data-dir.js';
import { describeApplied } from './imports/apply-summary.js';
import { createHost } from './host/index.js';
import { appVersion } from './host/version.js';
import { checkDatabaseUrl, redactDatabaseUrl } from './db/postgres.js';
import { BrowserLink } from './serve/link.js';
import { startServer } from './serve/server.js';
import { canonicalIp } from './serve/tls.js';
import { describeReport, hasAnimaData } from './vault/command.js';

const USAGE = `Usage: anima serve [--port N] [--data-dir DIR] [--database postgres://…] [--listen ADDR [--lan-port N]] [--no-open]
       anima import FILE [--data-dir DIR] [--yes]
       anima export --out FILE [--data-dir DIR] [--force]
       anima vault sync --dir DIR [--dry-run] [--data-dir DIR]
       anima migrate-store --from DIR|postgres://… --to postgres://…|DIR

  serve     Run Anima in your browser: prints the address to open.
            --port       port on 127.0.0.1 (default: ANIMA_PORT, else the one this data folder used last time,
                         else a free one; 0: a free one). The link's token stays until reset in Settings.
            --data-dir   where the companion's data lives (default: ANIMA_DATA_DIR or your app-data folder)
            --database   keep the data on a PostgreSQL server (15 or newer, with pg_trgm) instead, e.g.
                         postgres://anima@localhost:5432/anima (default: ANIMA_DATABASE); the data folder
                         still holds the keys and the link. One Anima per database at a time.
            --listen     also serve your phone and other devices on the local network, over HTTPS only,
                         on ADDR: 0.0.0.0 (every IPv4 network of this machine), :: (every network, IPv6
                         and IPv4), or one of its addresses, e.g. 192.168.1.20 or fd00::20. Never
                         without it. Pair a device in Settings → Devices (each gets its own token,
                         revocable there); the certificate is made for this data folder.
            --lan-port   its port (default: the one it had last time, else the port above + 1, or a free
                         one when that is taken)
            --no-open    do not try to open a browser window
  import    Bring in conversations from another app's export: ChatGPT's or Claude's conversations.json,
            a SillyTavern chat (.jsonl), an Open WebUI or LibreChat export, or a character card (.png, .json);
            or Anima's own archive (the zip anima export writes): everything in it, in one piece.
            Says what the file holds and asks before storing anything; Ctrl+C stops after the
            conversation in hand (what was stored stays; importing the file again goes on from there).
            --data-dir   as for serve (Anima must not be running on it)
            --yes        import without asking (a card's blocks too)
  export    Write everything to one zip: anima.json (conversations with every version of each message,
            memories and their journal, the self layer, the diary, mood, the graph, settings — never an
            API key), a markdown vault/ and anima.sql for PostgreSQL. Ctrl+C stops and leaves no file.
            --out        the archive to write (written as FILE.partial, renamed when complete)
            --data-dir   as for serve (Anima must not be running on it)
            --force      replace an existing FILE (only once the new archive is complete)
  vault sync  Keep a folder of memory files (one markdown file per memory, as in the export) in step
            with memory: your edits there become edits, new files new memories, deleted files forgotten
            memories (each undoable in Memories); then the folder is written to match. Files Anima did
            not write, or cannot read, are reported and left alone.
            --dir        the folder (made if missing)
            --dry-run    only list what would change; nothing is changed
            --data-dir   as for serve (Anima must not be running on it)
  migrate-store  Move the companion's data between a data folder and a PostgreSQL server, either way:
            every table is copied into an EMPTY target (a folder without a database, or a new
            database: createdb), checked (rows per table, recall's answers) and removed again if it
            does not match. The source is only read, and never changed; Anima must not be running on it.
            Images, pictures and keys are files and stay in the data folder: run the server engine
            with it (anima serve --data-dir DIR --database postgres://…).`;

/** The built renderer: next to this bundle (dist/renderer), or dist/ at the repo root when run from source. */
function findStaticDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [process.env.ANIMA_STATIC_DIR, path.join(here, 'renderer'), path.join(here, '..', 'dist', 'renderer')];
  for (const dir of candidates) {
    if (dir && fs.existsSync(path.join(dir, 'index.html'))) return dir;
  }
  throw new Error('The app page is not built yet. Run `npm run build` first (npm start and npm run serve do this for you).');
}

function openBrowser(url: string): void {
  const command = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) return;
  try {
    const child = spawn(command, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    // Printing the address is enough; opening a window is a courtesy.
  }
}

/** This machine's addresses on its networks (not loopback; IPv4 first; no IPv6 link-local, which needs a zone no browser address can carry). */
function lanAddresses(): string[] {
  const nics = Object.values(os.networkInterfaces())
    .flatMap((list) => list ?? [])
    .filter((nic) => !nic.internal);
  const v4 = nics.filter((nic) => nic.family === 'IPv4').map((nic) => nic.address);
  const v6 = nics.filter((nic) => nic.family === 'IPv6' && !/^fe[89ab][0-9a-f]:/i.test(nic.address)).map((nic) => canonicalIp(nic.address) ?? nic.address);
  return [...v4, ...v6];
}

/** --listen and --lan-port, checked before anything starts. */
function lanOption(listen: string | undefined, lanPort: string | undefined): { address: string; port?: number } | undefined {
  if (listen === undefined) {
    if (lanPort !== undefined) throw new Error('--lan-port goes with --listen ADDR (for example --listen 0.0.0.0).');
    return undefined;
  }
  const trimmed = listen.trim();
  if (/^\[?[0-9a-f:.]+%/i.test(trimmed)) {
    throw new Error(
      `--listen ${trimmed}: an IPv6 address with a zone (%…) cannot be opened in a browser. Use ::, or one of this machine's other addresses: ${lanAddresses().join(', ') || 'none found'}.`,
    );
  }
  // IPv6 as browsers write it ([::1], 0:0:0:0:0:0:0:1 → ::1): the certificate and the Host check use that form.
  const address = canonicalIp(trimmed);
  if (address === null) {
    throw new Error(
      `--listen takes an address of this machine: 0.0.0.0 for every IPv4 network, :: for every network (IPv6 and IPv4), or one such as ${lanAddresses()[0] ?? '192.168.1.20'} — not “${listen}”.`,
    );
  }
  if (lanPort === undefined) return { address };
  const port = Number(lanPort);
  if (!/^\d+$/.test(lanPort) || !Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--lan-port must be a port number, not “${lanPort}”.`);
  return { address, port };
}

async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      'data-dir': { type: 'string' },
      database: { type: 'string' },
      listen: { type: 'string' },
      'lan-port': { type: 'string' },
      'no-open': { type: 'boolean', default: false },
    },
  });
  const lan = lanOption(values.listen, values['lan-port']);
  // A PostgreSQL URL, checked before anything starts; only its redacted form is ever printed.
  const database = values.database ?? (process.env.ANIMA_DATABASE || undefined);
  if (database !== undefined) checkDatabaseUrl(database);
  // Given: that port (0: a free one). Not given: the port this data folder was served on last time.
  const given = values.port ?? process.env.ANIMA_PORT;
  const port = given === undefined ? undefined : Number(given);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) throw new Error(`--port must be a port number, not “${given}”.`);
  const dataDir = values['data-dir'] ? path.resolve(values['data-dir']) : defaultDataDir();
  const staticDir = findStaticDir();

  // Quiet unless debugging: the address line below must be the first URL a person (or a script) sees.
  const log = (level: 'info' | 'warn' | 'error', message: string) => {
    if (level === 'info' && !process.env.ANIMA_DEBUG) return;
    (level === 'error' ? console.error : console.warn)(`[anima ${level}] ${message}`);
  };
  // The folder's address (port and token) stays the same from one start to the next; Settings can reset it.
  const link = new BrowserLink(dataDir, log);
  const host = await createHost({ dataDir, mode: 'browser', log, browserLink: link, database });
  await link.load();
  const server = await startServer({ host, staticDir, port, log, link, lan }).catch(async (err: NodeJS.ErrnoException) => {
    await host.close().catch(() => {});
    if (lan && err.code === 'EADDRNOTAVAIL')
      throw new Error(`--listen ${lan.address} is not an address of this machine. Use 0.0.0.0 or ::, or one of: ${lanAddresses().join(', ') || 'none found'}.`);
    if (lan && err.code === 'EADDRINUSE' && lan.port !== undefined) throw new Error(`Port ${lan.port} (--lan-port) is taken by another program.`);
    throw err;
  });
  // Stopping is wired before the first line is printed: whoever waits for that line (a service
  // manager, a test) may send SIGTERM at once, and without a handler Node would die without closing.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\nStopping Anima (${signal})…`);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    await server.close().catch(() => {});
    await host.close().catch((err: Error) => console.error(err.message));
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  console.log(`Anima is running at ${server.url}`);
  if (server.movedFrom !== null) {
    console.log(
      `Port ${server.movedFrom}, where this data folder usually runs, is taken by another program: Anima runs on ${server.port} this time and from now on. Tabs still open on the old address need this new one.`,
    );
  }
  // The database named here, or the server this folder chose in Settings → Data (its URL already redacted).
  const storage = await host.api['storage.status']({});
  console.log(
    storage.engine === 'postgres'
      ? `Your companion's data is in the PostgreSQL database ${database ? redactDatabaseUrl(database) : storage.where} (keys and link in ${dataDir}). Press Ctrl+C to stop.`
      : `Your companion's data is in ${dataDir}. Press Ctrl+C to stop.`,
  );
  if (server.lan) {
    console.log(`On your local network (HTTPS only): ${server.lan.origin} — pair a phone or laptop in Settings → Devices.`);
    console.log(`Its certificate's fingerprint (SHA-256): ${server.lan.fingerprint}`);
  }
  if (!values['no-open'] && !process.env.CI) openBrowser(server.url);
  // The terminal's link is the one to open: after a reset in Settings, the new one.
  link.onReset(() => console.log(`The browser link was reset. Anima is now at ${server.url}`));
}

const FORMAT_NAMES: Record<ImportPreview['format'], string> = {
  chatgpt: 'a ChatGPT export',
  claude: 'a Claude export',
  sillytavern: 'a SillyTavern chat',
  card: 'a character card',
  openwebui: 'an Open WebUI export',
  librechat: 'a LibreChat export',
  anima: "Anima's own archive",
};

const n = (value: number, one: string, many: string) => `${value.toLocaleString('en-US')} ${value === 1 ? one : many}`;

/** "412 conversations, 38,120 messages, from 2023-04 to 2026-11" */
function describePreview(p: ImportPreview): string {
  const parts = [n(p.conversations, 'conversation', 'conversations'), n(p.messages, 'message', 'messages')];
  if (p.versions) parts.push(`${n(p.versions, 'earlier version', 'earlier versions')} kept`);
  const month = (iso: string) => iso.slice(0, 7);
  const span = p.from && p.to ? (month(p.from) === month(p.to) ? `, in ${month(p.from)}` : `, from ${month(p.from)} to ${month(p.to)}`) : '';
  return `${parts.join(', ')}${span}`;
}

/** An archive's parts, and what of each is here already (skipped). */
function describeArchive(a: NonNullable<ImportPreview['archive']>): string {
  const { parts } = a;
  const line = (count: { total: number; already: number }, one: string, many: string) =>
    `${n(count.total, one, many)}${count.already ? ` (${count.already.toLocaleString('en-US')} here already)` : ''}`;
  return [
    `  written by Anima ${a.appVersion} on ${a.exportedAt.slice(0, 10)} (data schema ${a.schemaVersion}); stored in one piece, or not at all:`,
    `  ${line(parts.conversations, 'conversation', 'conversations')}, ${line(parts.messages, 'message', 'messages')}`,
    `  ${line(parts.memories, 'memory', 'memories')}, ${line(parts.memoryChanges, 'journal entry', 'journal entries')}, ${line(parts.diaryBlocks, 'diary block', 'diary blocks')}, ${line(parts.moodDays, 'mood day', 'mood days')}`,
    `  ${line(parts.entities, 'entity', 'entities')}, ${line(parts.relations, 'relation', 'relations')}, ${line(parts.selfBlocks, 'self block', 'self blocks')}, ${line(parts.settings, 'setting', 'settings')}`,
    `  ${line(parts.providers, 'model connection', 'model connections')} (without keys: an archive never holds one)`,
  ].join('\n');
}

function describeProgress(p: ImportProgress): string {
  const already = p.already ? `, ${n(p.already, 'was', 'were')} already here` : '';
  return `${p.done.toLocaleString('en-US')} of ${n(p.total, 'conversation', 'conversations')} (${n(p.messages, 'message', 'messages')} stored${already})`;
}

async function ask(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

async function importCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { 'data-dir': { type: 'string' }, yes: { type: 'boolean', short: 'y', default: false } },
  });
  const file = positionals[0];
  if (!file || positionals.length > 1) {
    console.error(`anima import takes one file.\n\n${USAGE}`);
    return 2;
  }
  let size: number;
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) throw new Error('not a file');
    size = stat.size;
  } catch {
    console.error(`There is no file at ${file}.`);
    return 1;
  }
  if (size > MAX_IMPORT_BYTES) {
    console.error(
      `${path.basename(file)} is ${Math.round(size / 1024 / 1024)} MB; files up to ${MAX_IMPORT_BYTES / 1024 / 1024} MB can be imported. Split the export or import the conversations file alone.`,
    );
    return 1;
  }
  const dataDir = values['data-dir'] ? path.resolve(values['data-dir']) : defaultDataDir();
  const log = (level: 'info' | 'warn' | 'error', message: string) => {
    if (level === 'info' && !process.env.ANIMA_DEBUG) return;
    console.error(`[anima ${level}] ${message}`);
  };
  // The whole app on this folder (its lock keeps a running Anima away), without the sleep scheduler.
  const host = await createHost({ dataDir, mode: 'browser', log, sleep: { tickMs: 0 }, detectLocalServers: false });
  try {
    // The file goes to the host through the same API the window uses, a chunk at a time.
    const name = path.basename(file);
    const fd = fs.openSync(file, 'r');
    let uploadId: string | undefined;
    try {
      const chunk = Buffer.alloc(IMPORT_CHUNK_BYTES);
      for (let offset = 0; offset < size;) {
        const read = fs.readSync(fd, chunk, 0, Math.min(IMPORT_CHUNK_BYTES, size - offset), offset);
        if (read <= 0) throw new Error(`${name} became shorter while it was being read.`);
        ({ uploadId } = await host.api['imports.upload']({ uploadId, name, size, offset, data: chunk.subarray(0, read).toString('base64') }));
        offset += read;
      }
    } finally {
      fs.closeSync(fd);
    }
    const preview = await host.api['imports.preview']({ uploadId: uploadId! });
    console.log(`${name} is ${FORMAT_NAMES[preview.format]}${preview.conversations ? `: ${describePreview(preview)}` : ''}.`);
    if (preview.archive) console.log(describeArchive(preview.archive));
    for (const warning of preview.warnings) console.log(`  note: ${warning}`);
    const interactive = process.stdin.isTTY && !values.yes;
    const confirm = async (question: string): Promise<boolean> => {
      if (values.yes) return true;
      if (!interactive) {
        console.error('Not imported: add --yes to import without being asked.');
        return false;
      }
      return ask(question);
    };

    if (preview.card) {
      console.log(`\nThe card "${preview.card.name}" would set the companion's self blocks:`);
      for (const [key, text] of Object.entries(preview.card.blocks))
        console.log(`  ${key}: ${text.replace(/\s+/g, ' ').slice(0, 100)}${text.length > 100 ? '…' : ''}`);
      if (!(await confirm("Replace these blocks with the card's? [y/N] "))) return 1;
      const applied = await host.api['imports.applyCard']({ blocks: preview.card.blocks });
      console.log(`Saved ${n(applied.previous.length, 'block', 'blocks')} (Settings → Companion shows them; each can be reset there).`);
      if (!preview.conversations) return 0;
    }
    if (preview.archive) {
      const parts = Object.values(preview.archive.parts);
      if (parts.every((p) => p.already === p.total) && parts.some((p) => p.total > 0)) {
        console.log('Everything in this archive is here already; nothing to do.');
        return 0;
      }
    } else if (preview.conversations === 0) {
      console.log('There is no conversation to import in this file.');
      return 1;
    }
    // Conversations here already that the file carries further get their new messages (or another version of the last one).
    const grown = preview.grown ?? 0;
    const newVersions = preview.newVersions ?? 0;
    const skipped = preview.alreadyImported - grown - newVersions;
    if (!preview.archive && skipped >= preview.conversations) {
      console.log('Everything in this file is already imported; nothing to do.');
      return 0;
    }
    if (grown)
      console.log(
        `${n(grown, 'conversation', 'conversations')} already here ${grown === 1 ? 'has' : 'have'} ${n(preview.newMessages ?? 0, 'new message', 'new messages')}; they will be added after ours.`,
      );
    if (newVersions) console.log(`${n(newVersions, 'conversation', 'conversations')} already here will keep the file's last message as an earlier version.`);
    if (skipped > 0) console.log(`${n(skipped, 'conversation is', 'conversations are')} already here and will be skipped.`);
    if (!(await confirm('Import? [y/N] '))) return 1;

    const ended = new Promise<ImportProgress>((resolve) => {
      let shownAt = Date.now();
      const off = host.on((event, payload) => {
        if (event !== 'imports.progress') return;
        if (payload.state !== 'running') {
          off();
          resolve(payload);
        } else if (Date.now() - shownAt > 1000) {
          shownAt = Date.now();
          process.stdout.write(process.stdout.isTTY ? `\r${describeProgress(payload)}` : `${describeProgress(payload)}\n`);
        }
      });
    });
    const stop = () => {
      console.log('\nStopping after the conversation in hand…');
      void host.api['imports.cancel']({});
    };
    process.once('SIGINT', stop);
    await host.api['imports.apply']({ previewId: preview.previewId });
    const end = await ended;
    process.off('SIGINT', stop);
    if (process.stdout.isTTY) process.stdout.write('\r');
    const stored = `${n(end.imported, 'conversation', 'conversations')} and ${n(end.messages, 'message', 'messages')} stored`;
    const skippedHere = end.already ? `; ${n(end.already, 'was', 'were')} already here` : '';
    for (const note of end.notes ?? []) console.log(`  note: ${note}`);
    if (end.state === 'done') {
      console.log(`Imported: ${preview.archive ? `${stored}${skippedHere}` : describeApplied(end)}.`);
      console.log(
        preview.archive
          ? 'The archive is in: its memories, diary and graph came with it, and its conversations are history the sleep cycle has read.'
          : 'They are marked as history: the companion does not read them all tonight in its sleep.',
      );
      return 0;
    }
    if (preview.archive) {
      // An archive is stored in one transaction: a stop or an error leaves nothing of it.
      if (end.state === 'cancelled') console.log('Stopped: nothing of the archive was stored.');
      else console.error(`Not imported: ${end.error?.message} Nothing of the archive was stored.`);
      return end.state === 'failed' ? 1 : 130;
    }
    if (end.state === 'cancelled') {
      console.log(`Stopped: ${describeApplied(end)}. Import the same file again to go on.`);
      return 130;
    }
    console.error(`Stopped by an error at "${end.failedAt}": ${end.error?.message}. ${stored} before it (they stay); nothing of that conversation was stored.`);
    return 1;
  } finally {
    await host.close();
  }
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

async function exportCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { out: { type: 'string', short: 'o' }, 'data-dir': { type: 'string' }, force: { type: 'boolean', default: false } },
  });
  if (!values.out || positionals.length) {
    console.error(`anima export needs --out FILE.\n\n${USAGE}`);
    return 2;
  }
  const dataDir = values['data-dir'] ? path.resolve(values['data-dir']) : defaultDataDir();
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  const tty = process.stderr.isTTY;
  let shown = -1;
  try {
    const result = await exportFolder({
      dataDir,
      out: values.out,
      force: values.force,
      appVersion: appVersion(),
      signal: controller.signal,
      log: (message) => console.error(`[anima warn] ${message}`),
      onProgress: ({ phase, done, total }) => {
        const percent = total ? Math.floor((done / total) * 100) : 0;
        if (tty) process.stderr.write(`\rExporting… ${percent}% (${phase})   `);
        else if (Math.floor(percent / 10) !== shown) console.error(`Exporting… ${percent}% (${phase})`);
        shown = Math.floor(percent / 10);
      },
    });
    if (tty) process.stderr.write('\n');
    const c = result.counts;
    console.log(
      `Wrote ${result.file} (${megabytes(result.bytes)}): ${c.conversations ?? 0} conversations, ${c.messages ?? 0} messages, ${c.memories ?? 0} memories, ${c.diary_blocks ?? 0} diary blocks in ${(result.ms / 1000).toFixed(1)} s.`,
    );
    return 0;
  } catch (err) {
    if (tty) process.stderr.write('\n');
    if (err instanceof ApiError && err.code === 'cancelled') {
      console.error('Export stopped; nothing was written.');
      return 130;
    }
    console.error(`Anima could not export: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    process.off('SIGINT', stop);
  }
}

async function vaultCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { dir: { type: 'string' }, 'dry-run': { type: 'boolean', default: false }, 'data-dir': { type: 'string' } },
  });
  if (positionals[0] !== 'sync' || positionals.length > 1 || !values.dir) {
    console.error(`anima vault sync needs --dir DIR.\n\n${USAGE}`);
    return 2;
  }
  const dataDir = values['data-dir'] ? path.resolve(values['data-dir']) : defaultDataDir();
  const log = (level: 'info' | 'warn' | 'error', message: string) => {
    if (level === 'info' && !process.env.ANIMA_DEBUG) return;
    console.error(`[anima ${level}] ${message}`);
  };
  if (!hasAnimaData(dataDir)) {
    console.error(`There is no Anima data in ${dataDir}.`);
    return 1;
  }
  let host;
  try {
    // The whole app on this folder (its lock keeps a running Anima away), with nothing in the background.
    host = await createHost({ dataDir, mode: 'browser', log, sleep: { tickMs: 0 }, backups: { tickMs: 0 }, vaultAuto: false, detectLocalServers: false });
    const report = await host.api['vault.sync']({ dir: path.resolve(values.dir), dryRun: values['dry-run'] });
    for (const text of describeReport(report)) console.log(text);
    return 0;
  } catch (err) {
    console.error(`Anima could not sync the vault: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    await host?.close();
  }
}

async function migrateStoreCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { from: { type: 'string' }, to: { type: 'string' } } });
  if (!values.from || !values.to || positionals.length) {
    console.error(`anima migrate-store needs --from and --to.\n\n${USAGE}`);
    return 2;
  }
  try {
    const from = parseStoreEnd(values.from);
    const to = parseStoreEnd(values.to);
    console.log(`Moving ${describeEnd(from)} → ${describeEnd(to)}`);
    const result = await migrateStore({ from, to, log: (line) => console.log(line) });
    for (const note of result.notes) console.log(`Note: ${note}`);
    console.log(
      `Done: ${result.rows.toLocaleString('en-US')} rows in ${result.tables.length} tables copied and checked in ${(result.ms / 1000).toFixed(1)} s. ${describeEnd(from)} was not changed.`,
    );
    return 0;
  } catch (err) {
    console.error(`Anima could not move the data: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  switch (command) {
    case 'serve':
      return serve(rest);
    case 'import':
      process.exitCode = await importCommand(rest);
      return;
    case 'export':
      process.exitCode = await exportCommand(rest);
      return;
    case 'vault':
      process.exitCode = await vaultCommand(rest);
      return;
    case 'migrate-store':
      process.exitCode = await migrateStoreCommand(rest);
      return;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return;
    default:
      console.error(`Unknown command “${command}”.\n\n${USAGE}`);
      process.exit(2);
  }
}

main().catch((err: unknown) => {
  // Known failures (a locked data folder, an unbuilt app) are sentences for a person, not stack traces.
  console.error(err instanceof ApiError || err instanceof Error ? `Anima could not start: ${err.message}` : err);
  process.exit(1);
});
