import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  APP_ENTRY_URL,
  CONTENT_SECURITY_POLICY,
  UntrustedSenderError,
  checkExternalUrl,
  createIpcHandle,
  isAllowedNavigation,
  isAppUrl,
  isPermissionAllowed,
  isTrustedSender,
  isWindowPage,
  resolveAppPath,
  type IpcEventLike,
} from './security-rules.js';

const root = path.resolve('fake-root', 'renderer');

describe('resolveAppPath', () => {
  it('serves files under the root', () => {
    expect(resolveAppPath(root, 'app://anima/index.html')).toBe(path.join(root, 'index.html'));
    expect(resolveAppPath(root, 'app://anima/assets/main-1a2b.js?v=1#x')).toBe(path.join(root, 'assets', 'main-1a2b.js'));
    expect(resolveAppPath(root, 'app://anima/fonts/Noto%20Sans.woff2')).toBe(path.join(root, 'fonts', 'Noto Sans.woff2'));
  });

  it('maps the bare origin to index.html', () => {
    expect(resolveAppPath(root, 'app://anima')).toBe(path.join(root, 'index.html'));
    expect(resolveAppPath(root, 'app://anima/')).toBe(path.join(root, 'index.html'));
  });

  it.each([
    ['parent segments', 'app://anima/../../etc/passwd'],
    ['parent segments mid-path', 'app://anima/assets/../../secret'],
    ['encoded dots', 'app://anima/%2e%2e/%2e%2e/etc/passwd'],
    ['mixed-case encoded dots', 'app://anima/%2E%2e/secret'],
    ['encoded slash with dots', 'app://anima/..%2f..%2fetc%2fpasswd'],
    ['encoded slash alone', 'app://anima/assets%2f..%2f..%2fsecret'],
    ['raw backslash', 'app://anima/..\\..\\windows\\win.ini'],
    ['encoded backslash', 'app://anima/..%5c..%5cwindows%5cwin.ini'],
    ['null byte', 'app://anima/index.html%00.png'],
    ['raw null byte', 'app://anima/index.html\0'],
    ['absolute posix path', 'app://anima//etc/passwd'],
    ['encoded absolute path', 'app://anima/%2fetc%2fpasswd'],
    ['drive letter', 'app://anima/C:/Windows/win.ini'],
    ['encoded drive letter', 'app://anima/C%3a%5cWindows'],
    ['another host', 'app://evil/index.html'],
    ['another scheme', 'file:///etc/passwd'],
    ['broken encoding', 'app://anima/%E0%A4%A'],
    ['a directory', 'app://anima/assets/'],
  ])('refuses %s', (_name, url) => {
    expect(resolveAppPath(root, url)).toBeNull();
  });

  it('keeps a double-encoded name as a harmless literal file name', () => {
    expect(resolveAppPath(root, 'app://anima/%252e%252e/secret')).toBe(path.join(root, '%2e%2e', 'secret'));
  });
});

describe('app URLs and navigation', () => {
  it('recognises our own pages only', () => {
    expect(isAppUrl(APP_ENTRY_URL)).toBe(true);
    expect(isAppUrl('app://anima/settings?tab=1')).toBe(true);
    expect(isAppUrl('app://anima.evil.com/')).toBe(false);
    expect(isAppUrl('app://user:pw@anima/')).toBe(false);
    expect(isAppUrl('https://anima/')).toBe(false);
    expect(isAppUrl('file:///index.html')).toBe(false);
    expect(isAppUrl('not a url')).toBe(false);
  });

  it('allows navigation within app:// only', () => {
    expect(isAllowedNavigation('app://anima/index.html#/chat')).toBe(true);
    expect(isAllowedNavigation('https://example.com/')).toBe(false);
    expect(isAllowedNavigation('javascript:alert(1)')).toBe(false);
    expect(isAllowedNavigation('data:text/html,hi')).toBe(false);
  });

  it('while the window is on the paired server, allows that origin and nothing else (not even app://)', () => {
    const server = 'https://192.168.1.20:8443';
    expect(isAllowedNavigation('https://192.168.1.20:8443/', server)).toBe(true);
    expect(isAllowedNavigation('https://192.168.1.20:8443/#pair=x&fp=ab', server)).toBe(true);
    expect(isWindowPage('https://192.168.1.20:8443/manifest.webmanifest', server)).toBe(true);
    for (const other of [
      'https://192.168.1.20:8444/',
      'http://192.168.1.20:8443/',
      'https://192.168.1.21:8443/',
      'https://user:pw@192.168.1.20:8443/',
      'https://example.com/',
      APP_ENTRY_URL,
      'not a url',
    ]) {
      expect(isAllowedNavigation(other, server)).toBe(false);
    }
    // Without a server, its origin is foreign like any other.
    expect(isAllowedNavigation('https://192.168.1.20:8443/')).toBe(false);
  });

  it('carries the required CSP directives', () => {
    for (const directive of [
      "default-src 'self'",
      "script-src 'self'",
      "img-src 'self' data:",
      "connect-src 'self'",
      "object-src 'none'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
    ]) {
      expect(CONTENT_SECURITY_POLICY.split('; ')).toContain(directive);
    }
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-eval');
    // Styles only from the bundle (and cytoscape's one stylesheet by hash: shared/csp.test.ts).
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe-inline');
    expect(CONTENT_SECURITY_POLICY.split('; ').find((d) => d.startsWith('style-src '))).toMatch(/^style-src 'self' 'sha256-[\w+/]+={0,2}'$/);
  });
});

describe('checkExternalUrl', () => {
  it('accepts http and https links, normalized', () => {
    expect(checkExternalUrl('https://example.com/docs?q=1')).toBe('https://example.com/docs?q=1');
    expect(checkExternalUrl('  http://EXAMPLE.com  ')).toBe('http://example.com/');
  });

  it.each([
    'file:///etc/passwd',
    'javascript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'smb://server/share',
    'ms-msdt:/id',
    'app://anima/index.html',
    'mailto:someone@example.com',
    'https://user:secret@example.com/',
    'https://good.example@evil.example/',
    'http://',
    'not a url',
    '',
  ])('refuses %s', (url) => {
    expect(checkExternalUrl(url)).toBeNull();
  });

  it('refuses non-strings and absurdly long URLs', () => {
    expect(checkExternalUrl(undefined)).toBeNull();
    expect(checkExternalUrl({ toString: () => 'https://example.com' })).toBeNull();
    expect(checkExternalUrl(`https://example.com/${'a'.repeat(3000)}`)).toBeNull();
  });
});

describe('permissions', () => {
  it('denies by default', () => {
    for (const p of ['media', 'geolocation', 'notifications', 'openExternal', 'clipboard-read', 'unknown']) {
      expect(isPermissionAllowed(p, APP_ENTRY_URL)).toBe(false);
    }
  });

  it('allows clipboard writes for our own pages only', () => {
    expect(isPermissionAllowed('clipboard-sanitized-write', APP_ENTRY_URL)).toBe(true);
    expect(isPermissionAllowed('clipboard-sanitized-write', 'https://example.com/')).toBe(false);
    expect(isPermissionAllowed('clipboard-sanitized-write', undefined)).toBe(false);
  });

  it('on the paired server, allows its pages the same and our own no longer', () => {
    const server = 'https://192.168.1.20:8443';
    expect(isPermissionAllowed('clipboard-sanitized-write', server, server)).toBe(true);
    expect(isPermissionAllowed('clipboard-sanitized-write', `${server}/`, server)).toBe(true);
    expect(isPermissionAllowed('media', `${server}/`, server)).toBe(false);
    expect(isPermissionAllowed('clipboard-sanitized-write', 'https://192.168.1.20:9999/', server)).toBe(false);
    expect(isPermissionAllowed('clipboard-sanitized-write', APP_ENTRY_URL, server)).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------

const OUR_ID = 7;
const isOurs = (id: number) => id === OUR_ID;

function fakeEvent(over: { id?: number; url?: string; parent?: unknown; frame?: null } = {}): IpcEventLike {
  const senderFrame = over.frame === null ? null : { url: over.url ?? APP_ENTRY_URL, parent: over.parent ?? null };
  return { sender: { id: over.id ?? OUR_ID }, senderFrame };
}

describe('isTrustedSender', () => {
  it('trusts the top frame of our window showing our page', () => {
    expect(isTrustedSender(fakeEvent(), isOurs)).toBe(true);
    expect(isTrustedSender(fakeEvent({ url: 'app://anima/index.html#/settings' }), isOurs)).toBe(true);
  });

  it('refuses a destroyed frame, a subframe, another window, or another page', () => {
    expect(isTrustedSender(fakeEvent({ frame: null }), isOurs)).toBe(false);
    expect(isTrustedSender(fakeEvent({ parent: { url: APP_ENTRY_URL } }), isOurs)).toBe(false);
    expect(isTrustedSender(fakeEvent({ id: 99 }), isOurs)).toBe(false);
    expect(isTrustedSender(fakeEvent({ url: 'https://evil.example/' }), isOurs)).toBe(false);
    expect(isTrustedSender(fakeEvent({ url: 'file:///index.html' }), isOurs)).toBe(false);
    expect(isTrustedSender(fakeEvent({ url: '' }), isOurs)).toBe(false);
  });

  it('trusts another page only where the channel says so (the paired server, top frame, our window)', () => {
    const onServer = (url: string) => isWindowPage(url, 'https://192.168.1.20:8443');
    expect(isTrustedSender(fakeEvent({ url: 'https://192.168.1.20:8443/' }), isOurs)).toBe(false);
    expect(isTrustedSender(fakeEvent({ url: 'https://192.168.1.20:8443/' }), isOurs, onServer)).toBe(true);
    expect(isTrustedSender(fakeEvent({ url: 'https://192.168.1.20:8443/', parent: {} }), isOurs, onServer)).toBe(false);
    expect(isTrustedSender(fakeEvent({ url: 'https://192.168.1.20:8443/', id: 99 }), isOurs, onServer)).toBe(false);
    expect(isTrustedSender(fakeEvent({ url: 'https://evil.example/' }), isOurs, onServer)).toBe(false);
  });
});

describe('createIpcHandle', () => {
  function fakeIpcMain() {
    const handlers = new Map<string, (event: IpcEventLike, ...args: any[]) => unknown>();
    return {
      handlers,
      handle(channel: string, listener: (event: IpcEventLike, ...args: any[]) => unknown) {
        handlers.set(channel, listener);
      },
    };
  }

  it('passes the arguments, never the event, to the handler of a trusted sender', async () => {
    const ipc = fakeIpcMain();
    const handler = vi.fn(async (a: unknown, b: unknown) => `${String(a)}-${String(b)}`);
    createIpcHandle(ipc, isOurs)('test:echo', handler);
    const result = await ipc.handlers.get('test:echo')!(fakeEvent(), 'x', 2);
    expect(result).toBe('x-2');
    expect(handler).toHaveBeenCalledWith('x', 2);
  });

  it('throws for an untrusted sender without calling the handler, and reports it', () => {
    const ipc = fakeIpcMain();
    const handler = vi.fn();
    const refused = vi.fn();
    createIpcHandle(ipc, isOurs, refused)('test:echo', handler);
    const listener = ipc.handlers.get('test:echo')!;
    for (const event of [fakeEvent({ url: 'https://evil.example/' }), fakeEvent({ id: 3 }), fakeEvent({ frame: null })]) {
      expect(() => listener(event, 'x')).toThrow(UntrustedSenderError);
    }
    expect(handler).not.toHaveBeenCalled();
    expect(refused).toHaveBeenCalledTimes(3);
    expect(refused.mock.calls[0]?.[0]).toBe('test:echo');
  });
});
