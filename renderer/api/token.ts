// The browser-mode token: arrives once in the address bar, then lives in sessionStorage so a reload
// keeps working while the link itself (with its secret) disappears from the address bar and history.
// A paired device (a phone on the LAN listener) keeps its own token in localStorage instead: it was
// given once, at pairing (POST /api/pair), and stays until the device is paired again.
export const TOKEN_STORAGE_KEY = 'anima.token';
export const DEVICE_TOKEN_KEY = 'anima.deviceToken';

export interface TokenEnv {
  href: string;
  storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;
  replaceUrl: (url: string) => void;
  /** Where a paired device keeps its token (localStorage); consulted after the two above. */
  deviceStorage?: Pick<Storage, 'getItem'>;
}

/** `#pair=<secret>&fp=<hex>`: the pairing address Settings → Devices shows as a QR code. */
export interface PairingLink {
  secret: string;
  /** The certificate's SHA-256 fingerprint, colon hex as browsers show it (AB:CD:…). */
  fingerprint: string;
}

export function pairingFromHash(hash: string): PairingLink | null {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const secret = params.get('pair');
  const fp = params.get('fp') ?? '';
  if (!secret || !/^[0-9a-f]{64}$/i.test(fp)) return null;
  return { secret, fingerprint: fp.toUpperCase().match(/../g)!.join(':') };
}

/** Keeps a paired device's token (it outlives the tab: the device stays paired until revoked). */
export function keepDeviceToken(storage: Pick<Storage, 'setItem'>, token: string): void {
  storage.setItem(DEVICE_TOKEN_KEY, token);
}

/** Whether this browser holds a paired device's token. */
export function hasDeviceToken(storage: Pick<Storage, 'getItem'>): boolean {
  try {
    return !!storage.getItem(DEVICE_TOKEN_KEY);
  } catch {
    return false;
  }
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
    return env.storage.getItem(TOKEN_STORAGE_KEY) ?? env.deviceStorage?.getItem(DEVICE_TOKEN_KEY) ?? null;
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
