// What an admitted request gets: POST /api/call/<method> runs it on the host; anything outside
// /api/ is a file of the renderer bundle.
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import path from 'node:path';

import type { ApiMethod } from '../../shared/api.js';
import { CONTENT_SECURITY_POLICY } from '../../shared/csp.js';
import type { Host } from '../host/types.js';
import { asApiError, statusForErrorCode } from './errors.js';
import { describe, type ServeLog } from './log.js';
import { INTERNAL_MESSAGE, sendError, sendJson } from './respond.js';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.avif': 'image/avif',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.wasm': 'application/wasm',
};

// ---------------------------------------------------------------------------------------------
// POST /api/call/<method>
// ---------------------------------------------------------------------------------------------

/** Runs an admitted call (see gates.ts) and answers with its result or its error. */
export async function answerCall(res: ServerResponse, call: { method: ApiMethod; body: Buffer }, host: Host, log: ServeLog): Promise<void> {
  const { method: name, body } = call;
  let input: unknown;
  if (body.length > 0) {
    try {
      input = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
    } catch {
      sendError(res, 400, { code: 'invalid_input', message: 'The request body is not valid JSON.' });
      return;
    }
  }

  let value: unknown;
  try {
    value = await host.call(name, input);
  } catch (err) {
    const apiError = asApiError(err);
    if (!apiError || apiError.code === 'internal') {
      log('error', `serve: ${name} failed: ${describe(err)}`);
      sendError(res, 500, { code: 'internal', message: INTERNAL_MESSAGE });
      return;
    }
    sendError(res, statusForErrorCode(apiError.code), apiError.toJSON());
    return;
  }

  let json: string;
  try {
    json = JSON.stringify(value) ?? 'null';
  } catch (err) {
    log('error', `serve: the result of ${name} could not be serialised: ${describe(err)}`);
    sendError(res, 500, { code: 'internal', message: INTERNAL_MESSAGE });
    return;
  }
  sendJson(res, 200, json);
}

// ---------------------------------------------------------------------------------------------
// Static files
// ---------------------------------------------------------------------------------------------

/** The real path of the bundle's folder. */
export async function resolveStaticRoot(staticDir: string): Promise<string> {
  // Resolved once so every containment check compares real paths, symlinks included.
  const staticRoot = await realpath(path.resolve(staticDir));
  if (!(await stat(staticRoot)).isDirectory()) throw new Error('serve: staticDir is not a directory');
  return staticRoot;
}

/** Answers GET or HEAD for `rawPath` (undecoded, no query) from the bundle in `staticRoot`. */
export async function serveStatic(res: ServerResponse, staticRoot: string, rawPath: string, log: ServeLog): Promise<void> {
  const file = await resolveStatic(staticRoot, rawPath);
  if (!file) {
    sendError(res, 404, { code: 'not_found', message: 'Not found.' });
    return;
  }
  const ext = path.extname(file.path).toLowerCase();
  const type = CONTENT_TYPES[ext] ?? 'application/octet-stream';
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', file.size);
  res.setHeader('Cache-Control', 'no-store');
  if (ext === '.html') res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.writeHead(200);
  if (res.req.method === 'HEAD') {
    res.end();
    return;
  }
  const stream = createReadStream(file.path);
  stream.on('error', (err) => {
    log('error', `serve: reading ${path.relative(staticRoot, file.path)} failed: ${describe(err)}`);
    res.destroy();
  });
  res.on('close', () => stream.destroy());
  stream.pipe(res);
}

/** The file a URL path names inside staticRoot, or null for anything missing or outside it. */
async function resolveStatic(staticRoot: string, rawPath: string): Promise<{ path: string; size: number } | null> {
  if (!rawPath.startsWith('/') || rawPath.includes('\\')) return null;
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return null;
  const segments = decoded.split('/').filter((s) => s !== '');
  // '..' and hidden files are refused outright rather than normalised: no request that
  // spells them is legitimate, and refusing keeps the containment check a second line of defence.
  if (segments.some((s) => s.startsWith('.'))) return null;
  if (segments.length === 0) segments.push('index.html');

  const candidate = path.resolve(staticRoot, ...segments);
  if (!isInside(staticRoot, candidate)) return null;
  try {
    const real = await realpath(candidate);
    if (!isInside(staticRoot, real)) return null;
    const info = await stat(real);
    if (!info.isFile()) return null;
    return { path: real, size: info.size };
  } catch {
    return null;
  }
}

function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}
