// Serves the renderer bundle on app://anima/ (registered with protocol.handle in main.ts). A custom
// privileged scheme rather than file:// gives the page a real origin, so CSP 'self' means "the bundle"
// and not "every file on disk" (checklist #18). Written against the Fetch API only, so it is tested in
// plain Node.
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { CONTENT_SECURITY_POLICY, resolveAppPath } from './security-rules.js';

/** Module scripts are refused unless served with a JavaScript type, so guessing is not an option. */
const MIME_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
};

export function mimeType(file: string): string {
  return MIME_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
};

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

function plain(status: number, text: string): Response {
  return new Response(text, { status, headers: { 'content-type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS } });
}

/**
 * Returns the handler for protocol.handle('app', …). Paths without an extension that match no file
 * get index.html, so client-side routes survive a reload.
 */
export function createAppRequestHandler(rootDir: string): (request: Pick<Request, 'url' | 'method'>) => Promise<Response> {
  return async (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return plain(405, 'Method not allowed');
    let file = resolveAppPath(rootDir, request.url);
    if (!file) return plain(404, 'Not found');
    if (!(await isFile(file))) {
      if (path.extname(file)) return plain(404, 'Not found');
      file = path.join(rootDir, 'index.html');
      if (!(await isFile(file))) return plain(404, 'The renderer has not been built (run npm run build).');
    }
    const body = request.method === 'HEAD' ? null : await readFile(file);
    return new Response(body, {
      status: 200,
      headers: { 'content-type': mimeType(file), 'cache-control': 'no-cache', ...SECURITY_HEADERS },
    });
  };
}
