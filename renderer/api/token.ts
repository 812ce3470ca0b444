// The browser-mode token: arrives once in the address bar, then lives in sessionStorage so a reload
// keeps working while the link itself (with its secret) disappears from the address bar and history.
export const TOKEN_STORAGE_KEY = 'anima.token';

export interface TokenEnv {
  href: string;
  storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;
  replaceUrl: (url: string) => void;
}

export function takeToken(env: TokenEnv): string | null {
  const url = new URL(env.href);
  const fromQuery = url.searchParams.get('token');
  if (fromQuery) {
    try {
      env.storage.setItem(TOKEN_STORAGE_KEY, fromQuery);
    } catch {
      // Storage can be disabled; the token still works for this page load.
    }
    url.searchParams.delete('token');
    env.replaceUrl(url.pathname + url.search + url.hash);
    return fromQuery;
  }
  try {
    return env.storage.getItem(TOKEN_STORAGE_KEY);
  } catch {
    return null;
  }
}

export function forgetToken(storage: Pick<Storage, 'removeItem'>): void {
  try {
    storage.removeItem(TOKEN_STORAGE_KEY);
  } catch {
    // Nothing to forget.
  }
}

/** The token this tab holds (browser mode), or null. */
export function currentToken(storage: Pick<Storage, 'getItem'>): string | null {
  try {
    return storage.getItem(TOKEN_STORAGE_KEY);
  } catch {
    return null;
  }
}

/** The private link to open Anima with this token. */
export function linkWithToken(origin: string, token: string): string {
  return `${origin}/?token=${encodeURIComponent(token)}`;
}
