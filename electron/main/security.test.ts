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

function setup() {
  const contents = new FakeContents();
  const opened: string[] = [];
  const openExternal = vi.fn((url: string) => {
    opened.push(url);
    return true;
  });
  hardenWebContents(contents as unknown as WebContents, openExternal);
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
});
