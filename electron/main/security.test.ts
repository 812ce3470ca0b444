// The Electron wiring of the security rules, against fake web contents and session objects.
import { EventEmitter } from 'node:events';
import type { Session, WebContents } from 'electron';
import { describe, expect, it, vi } from 'vitest';
import { createOpenExternal, hardenWebContents, lockPermissions } from './security.js';

class FakeContents extends EventEmitter {
  windowOpenHandler: ((details: { url: string }) => { action: string }) | null = null;
  setWindowOpenHandler(handler: (details: { url: string }) => { action: string }) {
    this.windowOpenHandler = handler;
  }
}

function navigation(url: string, isMainFrame = true) {
  return { url, isMainFrame, preventDefault: vi.fn() };
}

function setup(serverOrigin: () => string | null = () => null) {
  const contents = new FakeContents();
  const opened: string[] = [];
  const openExternal = vi.fn((url: string) => {
    opened.push(url);
    return true;
  });
  hardenWebContents(contents as unknown as WebContents, openExternal, serverOrigin);
  return { contents, opened, openExternal };
}

describe('hardenWebContents', () => {
  it('lets the app navigate within app://', () => {
    const { contents, openExternal } = setup();
    const nav = navigation('app://anima/index.html#/settings');
    contents.emit('will-frame-navigate', nav);
    expect(nav.preventDefault).not.toHaveBeenCalled();
    expect(openExternal).not.toHaveBeenCalled();
  });

  it('stops navigation elsewhere and sends main-frame links to the browser', () => {
    const { contents, opened } = setup();
    const nav = navigation('https://example.com/');
    contents.emit('will-frame-navigate', nav);
    expect(nav.preventDefault).toHaveBeenCalled();
    expect(opened).toEqual(['https://example.com/']);

    const sub = navigation('https://ads.example/', false);
    contents.emit('will-frame-navigate', sub);
    expect(sub.preventDefault).toHaveBeenCalled();
    expect(opened).toHaveLength(1);
  });

  it('stops redirects away from the app and <webview> attachment', () => {
    const { contents } = setup();
    const redirect = navigation('https://example.com/');
    contents.emit('will-redirect', redirect);
    expect(redirect.preventDefault).toHaveBeenCalled();
    const attach = { preventDefault: vi.fn() };
    contents.emit('will-attach-webview', attach);
    expect(attach.preventDefault).toHaveBeenCalled();
  });

  it('while on the paired server, lets the window move within its origin only; other links go to the browser', () => {
    let origin: string | null = 'https://192.168.1.20:8443';
    const { contents, opened } = setup(() => origin);
    const within = navigation('https://192.168.1.20:8443/');
    contents.emit('will-frame-navigate', within);
    expect(within.preventDefault).not.toHaveBeenCalled();
    const third = navigation('https://example.com/');
    contents.emit('will-frame-navigate', third);
    expect(third.preventDefault).toHaveBeenCalled();
    const home = navigation('app://anima/index.html');
    contents.emit('will-frame-navigate', home);
    expect(home.preventDefault).toHaveBeenCalled();
    const redirect = navigation('https://192.168.1.20:9000/');
    contents.emit('will-redirect', redirect);
    expect(redirect.preventDefault).toHaveBeenCalled();
    expect(opened).toEqual(['https://example.com/', 'app://anima/index.html']);

    origin = null; // back on this computer: the server is foreign again
    const back = navigation('https://192.168.1.20:8443/');
    contents.emit('will-frame-navigate', back);
    expect(back.preventDefault).toHaveBeenCalled();
  });

  it('denies every new window, handing the URL to the checked opener', () => {
    const { contents, openExternal } = setup();
    expect(contents.windowOpenHandler!({ url: 'https://example.com/' })).toEqual({ action: 'deny' });
    expect(contents.windowOpenHandler!({ url: 'app://anima/index.html' })).toEqual({ action: 'deny' });
    expect(openExternal).toHaveBeenCalledTimes(2);
  });
});

describe('createOpenExternal', () => {
  it('opens only checked http(s) URLs', async () => {
    const shellOpen = vi.fn(async () => {});
    const log = vi.fn();
    const open = createOpenExternal(shellOpen, log);
    expect(open('https://example.com/a b')).toBe(true);
    expect(shellOpen).toHaveBeenCalledWith('https://example.com/a%20b');
    for (const bad of ['file:///etc/passwd', 'https://u:p@example.com/', 'app://anima/', 'javascript:alert(1)']) {
      expect(open(bad)).toBe(false);
    }
    expect(shellOpen).toHaveBeenCalledTimes(1);
    expect(log).toHaveBeenCalledTimes(4);
  });

  it('logs a failure of the system opener instead of throwing', async () => {
    const log = vi.fn();
    const open = createOpenExternal(async () => {
      throw new Error('no browser');
    }, log);
    expect(open('https://example.com/')).toBe(true);
    await vi.waitFor(() => expect(log).toHaveBeenCalledWith(expect.stringContaining('no browser')));
  });
});

describe('lockPermissions', () => {
  it('denies requests and checks unless allowed for our pages', () => {
    let request: any;
    let check: any;
    let device: any;
    const session = {
      setPermissionRequestHandler: (h: unknown) => (request = h),
      setPermissionCheckHandler: (h: unknown) => (check = h),
      setDevicePermissionHandler: (h: unknown) => (device = h),
    };
    lockPermissions(session as unknown as Session);

    const answers: boolean[] = [];
    request(null, 'media', (ok: boolean) => answers.push(ok), { requestingUrl: 'app://anima/index.html' });
    request(null, 'clipboard-sanitized-write', (ok: boolean) => answers.push(ok), { requestingUrl: 'app://anima/index.html' });
    request(null, 'clipboard-sanitized-write', (ok: boolean) => answers.push(ok), { requestingUrl: 'https://evil.example/' });
    expect(answers).toEqual([false, true, false]);

    expect(check(null, 'geolocation', 'app://anima', {})).toBe(false);
    expect(check(null, 'clipboard-sanitized-write', 'app://anima', {})).toBe(true);
    expect(device({ deviceType: 'usb' })).toBe(false);
  });

  it('follows the window onto the paired server: its origin allowed, our own pages no longer', () => {
    let request: any;
    let check: any;
    const session = {
      setPermissionRequestHandler: (h: unknown) => (request = h),
      setPermissionCheckHandler: (h: unknown) => (check = h),
      setDevicePermissionHandler: () => {},
    };
    lockPermissions(session as unknown as Session, () => 'https://192.168.1.20:8443');
    const answers: boolean[] = [];
    request(null, 'clipboard-sanitized-write', (ok: boolean) => answers.push(ok), { requestingUrl: 'https://192.168.1.20:8443/' });
    request(null, 'clipboard-sanitized-write', (ok: boolean) => answers.push(ok), { requestingUrl: 'https://evil.example/' });
    expect(answers).toEqual([true, false]);
    expect(check(null, 'clipboard-sanitized-write', 'https://192.168.1.20:8443', {})).toBe(true);
    expect(check(null, 'clipboard-sanitized-write', 'app://anima', {})).toBe(false);
  });
});
