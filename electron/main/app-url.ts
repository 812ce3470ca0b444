// Our own renderer's address, app://anima/…: one definition for main (security-rules.ts re-exports
// it) and the sandboxed preload, which may import nothing that needs Node.
export const APP_SCHEME = 'app';
export const APP_HOST = 'anima';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_ENTRY_URL = `${APP_ORIGIN}/index.html`;

export function parseUrl(raw: string): URL | null {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

/**
 * True for URLs of our own renderer. Node reports the origin of non-special schemes as "null",
 * so scheme and host are compared instead of `origin`.
 */
export function isAppUrl(raw: string): boolean {
  const url = parseUrl(raw);
  return !!url && url.protocol === `${APP_SCHEME}:` && url.host === APP_HOST && !url.username && !url.password;
}
