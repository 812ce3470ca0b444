// GET /api/exports/<name>: a finished export from the data folder's exports/, as a download, so a person
// in browser mode gets the file without opening the folder. The gates admit it like the event stream
// (the token in `?token=`: a link cannot send a header). Then:
//   - the name must be one the archive room writes (archive/exports.ts: anima-export-<UTC time>[-n].zip),
//     spelled exactly as the path has it — nothing is decoded, so no separator, `..`, absolute path or
//     `.partial` (an export still being written) can get through;
//   - the file is looked up by its real path, which must be that very name directly inside the real
//     exports folder: a link, even one named like an export, is not followed;
//   - it is opened once (never through a link), and what is sent is what that handle holds.
// Everything else is the same 404, so a request learns nothing about what is on the disk.
import { constants } from 'node:fs';
import { open, realpath, type FileHandle } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import path from 'node:path';

import { describe, type ServeLog } from './log.js';
import { sendError } from './respond.js';

/** The names archive/exports.ts gives its files (exportFileName); its tests hold the two together. */
export const EXPORT_FILE_NAME = /^anima-export-\d{4}-\d{2}-\d{2}-\d{6}(?:-[1-9]\d{0,5})?\.zip$/;

/** Answers an admitted GET /api/exports/<name>; `exportsDir` is the host's (undefined: there are none). */
export async function serveExport(res: ServerResponse, exportsDir: string | undefined, name: string, log: ServeLog): Promise<void> {
  const file = exportsDir !== undefined && EXPORT_FILE_NAME.test(name) ? await openExport(exportsDir, name) : null;
  if (!file) {
    sendError(res, 404, { code: 'not_found', message: 'There is no such export.' });
    return;
  }
  res.writeHead(200, {
    'Content-Type': 'application/zip',
    'Content-Length': file.size,
    // The name is ASCII letters, digits, '-' and '.' (EXPORT_FILE_NAME): nothing to quote or encode.
    'Content-Disposition': `attachment; filename="${name}"`,
    'Cache-Control': 'no-store',
  });
  if (file.size === 0) {
    await file.handle.close();
    res.end();
    return;
  }
  // Exactly the bytes Content-Length promised, whatever happens to the file meanwhile.
  const stream = file.handle.createReadStream({ start: 0, end: file.size - 1, autoClose: true });
  stream.on('error', (err) => {
    log('error', `serve: reading the export ${name} failed: ${describe(err)}`);
    res.destroy();
  });
  res.on('close', () => stream.destroy());
  stream.pipe(res);
}

/** The export `name` in `exportsDir`, open for reading, or null for anything that is not exactly that file. */
async function openExport(exportsDir: string, name: string): Promise<{ handle: FileHandle; size: number } | null> {
  let handle: FileHandle | undefined;
  try {
    const root = await realpath(path.resolve(exportsDir));
    const candidate = path.join(root, name);
    if ((await realpath(candidate)) !== candidate) return null;
    // O_NOFOLLOW: a link put in its place after the check above is refused, not followed (where the OS has it).
    handle = await open(candidate, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    const info = await handle.stat();
    if (!info.isFile()) {
      await handle.close();
      return null;
    }
    return { handle, size: info.size };
  } catch {
    await handle?.close().catch(() => {});
    return null;
  }
}
