// The main-process glue (main.ts + window.ts) against a mocked `electron`: Electron's binary
// cannot run in CI, but the wiring — what is registered, in which order, with which options — can be
// checked. Each test imports main.ts afresh, as a launch would.
import { EventEmitter } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ensureCertificate, type Certificate } from '../serve/tls.js';

const fake = vi.hoisted(() => ({ current: null as null | ReturnType<typeof makeElectron> }));

vi.mock('electron', () => {
  // Each export reads from the current test's fake, created by launch().
  const names = [
    'app',
    'protocol',
    'session',
    'ipcMain',
    'shell',
    'dialog',
    'safeStorage',
    'utilityProcess',
    'MessageChannelMain',
    'BrowserWindow',
    'screen',
    'nativeTheme',
  ];
  const module: Record<string, unknown> = {};
  for (const name of names) {
    Object.defineProperty(module, name, { enumerable: true, get: () => (fake.current as Record<string, unknown> | null)?.[name] });
  }
  return module;
});

class FakeChild extends EventEmitter {
  sent: Array<{ message: any; ports?: unknown[] }> = [];
  postMessage(message: unknown, ports?: unknown[]) {
    this.sent.push({ message, ports });
  }
  kill() {
    setImmediate(() => this.emit('exit', 9));
    return true;
  }
}

let nextId = 1;
class FakeWebContents extends EventEmitter {
  id = nextId++;
  url = 'app://anima/index.html';
  postMessage = vi.fn();
  send = vi.fn();
  getURL() {
    return this.url;
  }
}

export function makeElectron(options: { lock?: boolean; backend?: string } = {}) {
  const userData = mkdtempSync(path.join(os.tmpdir(), 'anima-main-test-'));
  let ready!: () => void;
  const readyPromise = new Promise<void>((r) => (ready = r));
  const children: FakeChild[] = [];
  const windows: FakeBrowserWindow[] = [];
  const ipcHandlers = new Map<string, (event: unknown, ...args: unknown[]) => unknown>();

  class FakeBrowserWindow extends EventEmitter {
    webContents = new FakeWebContents();
    destroyed = false;
    maximized = false;
    // The page is at the URL once asked (what a load that succeeds ends with; failures are emitted by the test).
    loadURL = vi.fn(async (url: string) => {
      this.webContents.url = url;
    });
    show = vi.fn();
    focus = vi.fn();
    restore = vi.fn();
    constructor(public options: any) {
      super();
      windows.push(this);
    }
    isDestroyed() {
      return this.destroyed;
    }
    isMinimized() {
      return false;
    }
    maximize() {
      this.maximized = true;
    }
    isMaximized() {
      return this.maximized;
    }
    getNormalBounds() {
      return { x: 10, y: 20, width: 900, height: 700 };
    }
  }

  let channel = 0;
  const app = Object.assign(new EventEmitter(), {
    userData,
    setPath: vi.fn((name: string, value: string) => {
      if (name === 'userData') app.userData = value;
    }),
    getPath: vi.fn((name: string) => (name === 'userData' ? app.userData : os.tmpdir())),
    getVersion: () => '0.1.0',
    enableSandbox: vi.fn(),
    requestSingleInstanceLock: vi.fn(() => options.lock ?? true),
    whenReady: () => readyPromise,
    quit: vi.fn(),
    exit: vi.fn(),
  });

  return {
    userData,
    ready: () => ready(),
    children,
    windows,
    ipcHandlers,
    app,
    protocol: { registerSchemesAsPrivileged: vi.fn(), handle: vi.fn() },
    session: {
      defaultSession: {
        setPermissionRequestHandler: vi.fn(),
        setPermissionCheckHandler: vi.fn(),
        setDevicePermissionHandler: vi.fn(),
        setCertificateVerifyProc: vi.fn(),
        clearStorageData: vi.fn(async (_options?: { origin?: string }) => {}),
      },
    },
    ipcMain: { handle: vi.fn((channel: string, listener: any) => ipcHandlers.set(channel, listener)) },
    shell: { openExternal: vi.fn(async () => {}) },
    dialog: { showMessageBox: vi.fn(async () => ({ response: 1 })), showErrorBox: vi.fn() },
    safeStorage: {
      isEncryptionAvailable: () => true,
      getSelectedStorageBackend: () => options.backend ?? 'gnome_libsecret',
      encryptString: (s: string) => Buffer.from(s),
      decryptString: (b: Buffer) => b.toString(),
    },
    utilityProcess: {
      fork: vi.fn((_modulePath: string, _args?: string[], _options?: object) => {
        const child = new FakeChild();
        children.push(child);
        return child;
      }),
    },
    MessageChannelMain: class {
      port1 = { end: 'host', n: ++channel };
      port2 = { end: 'renderer', n: channel };
    },
    BrowserWindow: FakeBrowserWindow,
    screen: { getAllDisplays: () => [{ workArea: { x: 0, y: 0, width: 1920, height: 1080 } }] },
    nativeTheme: { shouldUseDarkColors: false },
  };
}

const settle = () => new Promise((r) => setTimeout(r, 20));

async function launch(options: Parameters<typeof makeElectron>[0] = {}) {
  const e = makeElectron(options);
  fake.current = e;
  vi.resetModules();
  await import('./main.js');
  return e;
}

async function launchReady(options: Parameters<typeof makeElectron>[0] = {}) {
  const e = await launch(options);
  e.ready();
  // The window opens after the host starts, asynchronously: wait for it rather than for a fixed time.
  await vi.waitFor(() => expect(e.windows).toHaveLength(1));
  return e;
}

let envDataDir: string | undefined;
beforeEach(() => {
  envDataDir = process.env.ANIMA_DATA_DIR;
  delete process.env.ANIMA_DATA_DIR;
  vi.spyOn(console, 'info').mockImplementation(() => {});
  vi.spyOn(console, 'warn').mockImplementation(() => {});
  vi.spyOn(console, 'error').mockImplementation(() => {});
});
afterEach(() => {
  if (envDataDir === undefined) delete process.env.ANIMA_DATA_DIR;
  else process.env.ANIMA_DATA_DIR = envDataDir;
  if (fake.current) rmSync(fake.current.userData, { recursive: true, force: true });
  fake.current = null;
  vi.restoreAllMocks();
});

describe('before ready', () => {
  it('registers app:// as a privileged standard, secure scheme and enables the sandbox everywhere', async () => {
    const e = await launch();
    expect(e.protocol.registerSchemesAsPrivileged).toHaveBeenCalledWith([
      expect.objectContaining({ scheme: 'app', privileges: expect.objectContaining({ standard: true, secure: true }) }),
    ]);
    expect(e.app.enableSandbox).toHaveBeenCalled();
  });

  it('keeps Chromium profile and instance lock beside ANIMA_DATA_DIR', async () => {
    process.env.ANIMA_DATA_DIR = path.join(os.tmpdir(), 'anima-e2e-x');
    const e = await launch();
    expect(e.app.setPath).toHaveBeenCalledWith('userData', path.join(os.tmpdir(), 'anima-e2e-x', 'electron-profile'));
  });

  it('quits at once as a second instance', async () => {
    const e = await launch({ lock: false });
    expect(e.app.quit).toHaveBeenCalled();
    expect(e.ipcMain.handle).not.toHaveBeenCalled();
    e.ready();
    await settle();
    expect(e.utilityProcess.fork).not.toHaveBeenCalled();
    expect(e.windows).toHaveLength(0);
  });
});

describe('after ready', () => {
  it('serves app://, locks permissions, starts the host and opens one locked-down window', async () => {
    const e = await launchReady();
    expect(e.protocol.handle).toHaveBeenCalledWith('app', expect.any(Function));
    expect(e.session.defaultSession.setPermissionRequestHandler).toHaveBeenCalled();
    expect(e.session.defaultSession.setPermissionCheckHandler).toHaveBeenCalled();

    expect(e.utilityProcess.fork).toHaveBeenCalledTimes(1);
    expect(e.utilityProcess.fork.mock.calls[0]![0]).toMatch(/host-process\.mjs$/);
    expect(e.children[0]!.sent[0]!.message).toEqual({
      type: 'init',
      dataDir: path.join(e.userData, 'data'),
      secretStorage: 'os-encrypted',
    });

    const win = e.windows[0]!;
    expect(win.options.webPreferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webviewTag: false,
    });
    expect(win.options.webPreferences.preload).toMatch(/preload\.cjs$/);
    expect(path.isAbsolute(win.options.webPreferences.preload)).toBe(true);
    expect(win.loadURL).toHaveBeenCalledWith('app://anima/index.html');
  });

  it('falls back to the owner-only file when Linux has no real keyring', async () => {
    if (process.platform !== 'linux') return;
    const e = await launchReady({ backend: 'basic_text' });
    expect(e.children[0]!.sent[0]!.message).toMatchObject({ secretStorage: 'owner-only-file' });
  });

  it('hands each loaded page a fresh port to the host, and none to a foreign page', async () => {
    const e = await launchReady();
    const win = e.windows[0]!;
    win.webContents.emit('dom-ready');
    expect(e.children[0]!.sent.at(-1)).toEqual({ message: { type: 'connect' }, ports: [{ end: 'host', n: 1 }] });
    expect(win.webContents.postMessage).toHaveBeenCalledWith('anima:port', null, [{ end: 'renderer', n: 1 }]);

    win.webContents.emit('dom-ready'); // a reload
    expect(win.webContents.postMessage).toHaveBeenLastCalledWith('anima:port', null, [{ end: 'renderer', n: 2 }]);

    win.webContents.url = 'https://evil.example/';
    win.webContents.emit('dom-ready');
    expect(win.webContents.postMessage).toHaveBeenCalledTimes(2);
  });

  it('after a host restart, posts the new port only if the window still shows our own page', async () => {
    const e = await launchReady();
    const win = e.windows[0]!;
    win.webContents.url = 'https://192.168.1.20:8443/';
    e.children[0]!.emit('exit', 139);
    await vi.waitFor(() => expect(e.dialog.showMessageBox).toHaveBeenCalledTimes(1));
    expect(e.children).toHaveLength(2);
    expect(win.webContents.postMessage).not.toHaveBeenCalled();
  });

  it('opens external links only for our own window, and only http(s)', async () => {
    const e = await launchReady();
    const win = e.windows[0]!;
    const handler = e.ipcHandlers.get('anima:open-external')!;
    const event = (id: number, url = 'app://anima/index.html') => ({ sender: { id }, senderFrame: { url, parent: null } });

    await handler(event(win.webContents.id), 'https://example.com/');
    expect(e.shell.openExternal).toHaveBeenCalledWith('https://example.com/');
    await expect(async () => handler(event(win.webContents.id), 'file:///etc/passwd')).rejects.toThrow('http');
    expect(() => handler(event(999), 'https://example.com/')).toThrow(/Refused/);
    expect(() => handler(event(win.webContents.id, 'https://evil.example/'), 'https://example.com/')).toThrow(/Refused/);
    expect(e.shell.openExternal).toHaveBeenCalledTimes(1);
  });

  it('tells the user about a host crash, restarts it once and reconnects the window', async () => {
    const e = await launchReady();
    const win = e.windows[0]!;
    e.children[0]!.emit('exit', 139);
    await vi.waitFor(() => {
      expect(e.dialog.showMessageBox).toHaveBeenCalledTimes(1);
      expect(e.children).toHaveLength(2);
      expect(win.webContents.postMessage).toHaveBeenCalledWith('anima:port', null, [expect.objectContaining({ end: 'renderer' })]);
    });

    e.children[1]!.emit('exit', 139);
    await vi.waitFor(() => {
      expect(e.dialog.showMessageBox).toHaveBeenCalledTimes(2);
      expect(win.webContents.send).toHaveBeenCalledWith('anima:host-down');
    });
    expect(e.children).toHaveLength(2);
  });

  it('on quit, asks the host to close and only then lets the app quit', async () => {
    const e = await launchReady();
    const child = e.children[0]!;
    const first = { preventDefault: vi.fn() };
    e.app.emit('will-quit', first);
    expect(first.preventDefault).toHaveBeenCalled();
    expect(child.sent.at(-1)!.message).toEqual({ type: 'close' });
    expect(e.app.quit).not.toHaveBeenCalled();

    child.emit('exit', 0);
    await vi.waitFor(() => expect(e.app.quit).toHaveBeenCalledTimes(1));
    expect(e.dialog.showMessageBox).not.toHaveBeenCalled(); // a requested exit is not a crash

    const second = { preventDefault: vi.fn() };
    e.app.emit('will-quit', second);
    expect(second.preventDefault).not.toHaveBeenCalled();
  });

  it('brings the existing window forward when a second launch happens', async () => {
    const e = await launchReady();
    e.app.emit('second-instance');
    expect(e.windows[0]!.show).toHaveBeenCalled();
    expect(e.windows[0]!.focus).toHaveBeenCalled();
  });

  it('quits when the window closes, except on macOS', async () => {
    const e = await launchReady();
    e.app.emit('window-all-closed');
    expect(e.app.quit).toHaveBeenCalledTimes(process.platform === 'darwin' ? 0 : 1);
  });
});

// ---------------------------------------------------------------------------------------------
// The window as a client of the person's paired Anima server (remote-server.ts, window.animaDesktop).
// The server here is real HTTPS on 127.0.0.1 with a certificate from serve/tls.ts, serving the
// renderer's web app manifest; server-link.test.ts runs the same checks against the real LAN listener.
// ---------------------------------------------------------------------------------------------

describe('the window as a client of a paired server', () => {
  let server: HttpsServer;
  let certificate: Certificate;
  let otherCertificate: Certificate;
  let origin: string;
  let link: string;
  const requests: string[] = [];
  const certDirs: string[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) certDirs.push(mkdtempSync(path.join(os.tmpdir(), 'anima-main-cert-')));
    certificate = await ensureCertificate(certDirs[0]!, ['127.0.0.1', 'localhost']);
    otherCertificate = await ensureCertificate(certDirs[1]!, ['127.0.0.1', 'localhost']);
    const manifest = readFileSync(path.join(import.meta.dirname, '../../renderer/public/manifest.webmanifest'));
    server = createHttpsServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
      requests.push(`${req.method} ${req.url}`);
      if (req.url === '/manifest.webmanifest') res.writeHead(200, { 'Content-Type': 'application/manifest+json' }).end(manifest);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    link = `${origin}/#pair=OneTimeSecret_0123456789abcdef&fp=${certificate.fingerprint.replace(/:/g, '').toLowerCase()}`;
  }, 60_000);

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    for (const dir of certDirs) rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    requests.length = 0;
  });

  const pageEvent = (e: ReturnType<typeof makeElectron>, url: string) => ({
    sender: { id: e.windows[0]!.webContents.id },
    senderFrame: { url, parent: null },
  });
  const shell = (e: ReturnType<typeof makeElectron>, channel: string, url: string, ...args: unknown[]) =>
    e.ipcHandlers.get(`anima-desktop:${channel}`)!(pageEvent(e, url), ...args);
  const rememberedFile = (e: ReturnType<typeof makeElectron>) => path.join(e.userData, 'remote-server.json');

  /** The host asked to close exits, as the real one does once its database is closed. */
  async function hostCloses(child: FakeChild) {
    await vi.waitFor(() => expect(child.sent.some((s) => s.message.type === 'close')).toBe(true));
    child.emit('exit', 0);
  }

  /** Launched, then moved onto the server by useServer from our own page. */
  async function onServer() {
    const e = await launchReady();
    const reply = shell(e, 'use-server', 'app://anima/index.html', link);
    await hostCloses(e.children[0]!);
    await expect(reply).resolves.toEqual({ ok: true, value: null });
    return e;
  }

  /** A web contents as Electron hands it to 'web-contents-created'. */
  function hardened(e: ReturnType<typeof makeElectron>) {
    const contents = Object.assign(new EventEmitter(), { setWindowOpenHandler: vi.fn() });
    e.app.emit('web-contents-created', {}, contents);
    return (url: string) => {
      const details = { url, isMainFrame: true, preventDefault: vi.fn() };
      contents.emit('will-frame-navigate', details);
      return !details.preventDefault.mock.calls.length;
    };
  }

  it('useServer: checks the link, stops this computer’s host, pins the certificate and loads the link; the host port never reaches the server', async () => {
    const e = await launchReady();
    const win = e.windows[0]!;
    win.webContents.emit('dom-ready');
    expect(win.webContents.postMessage).toHaveBeenCalledTimes(1); // our own page has its port
    expect(await shell(e, 'where', 'app://anima/index.html')).toEqual({ kind: 'local', server: null });

    const reply = shell(e, 'use-server', 'app://anima/index.html', link);
    await hostCloses(e.children[0]!);
    await expect(reply).resolves.toEqual({ ok: true, value: null });
    expect(requests).toEqual(['GET /manifest.webmanifest']); // the check, certificate pinned
    expect(win.loadURL).toHaveBeenLastCalledWith(link);
    expect(e.utilityProcess.fork).toHaveBeenCalledTimes(1); // stopped, not restarted
    expect(e.dialog.showMessageBox).not.toHaveBeenCalled(); // a requested stop is not a crash

    const remembered = JSON.parse(readFileSync(rememberedFile(e), 'utf8'));
    expect(remembered).toEqual({ origin, fingerprint: certificate.fingerprint, since: expect.any(String), lastUsed: 'server' });
    expect((statSync(rememberedFile(e)).mode & 0o777).toString(8)).toBe('600');
    expect(await shell(e, 'where', link)).toEqual({ kind: 'server', server: { origin, fingerprint: certificate.fingerprint, since: remembered.since } });

    // Chromium's verify proc: this server's certificate only, other hosts left to Chromium.
    const verify = e.session.defaultSession.setCertificateVerifyProc.mock.calls.at(-1)![0] as (r: unknown, cb: (n: number) => void) => void;
    const verdict = (hostname: string, cert: string) => {
      let answer = NaN;
      verify({ hostname, certificate: { data: cert } }, (n) => (answer = n));
      return answer;
    };
    expect(verdict('127.0.0.1', certificate.cert)).toBe(0);
    expect(verdict('127.0.0.1', otherCertificate.cert)).toBe(-2);
    expect(verdict('example.com', otherCertificate.cert)).toBe(-3);

    // The server's page loads: no port is posted to it, however it asks.
    win.webContents.emit('dom-ready');
    expect(win.webContents.postMessage).toHaveBeenCalledTimes(1);
    expect(() => e.ipcHandlers.get('anima:open-external')!(pageEvent(e, `${origin}/`), 'https://example.com/')).toThrow(/Refused/);
    expect(() => shell(e, 'where', 'https://evil.example/')).toThrow(/Refused/);
    expect(() => shell(e, 'where', 'app://anima/index.html')).toThrow(/Refused/); // the window is not there now
  });

  it('on the server, navigation stays on its origin; other pages go to the browser; permissions follow', async () => {
    const e = await onServer();
    const navigate = hardened(e);
    expect(navigate(`${origin}/`)).toBe(true);
    expect(navigate(`${origin}/#/memories`)).toBe(true);
    expect(navigate('https://example.com/')).toBe(false);
    expect(navigate('app://anima/index.html')).toBe(false);
    expect(navigate(`https://127.0.0.1:1/`)).toBe(false);
    expect(e.shell.openExternal).toHaveBeenCalledWith('https://example.com/');
    const check = e.session.defaultSession.setPermissionCheckHandler.mock.calls[0]![0] as (...a: unknown[]) => boolean;
    expect(check(null, 'clipboard-sanitized-write', origin)).toBe(true);
    expect(check(null, 'clipboard-sanitized-write', 'https://example.com')).toBe(false);

    await shell(e, 'use-this-computer', `${origin}/`);
    expect(navigate(`${origin}/`)).toBe(false); // back home, the server is a foreign site again
    expect(navigate('app://anima/index.html#/chat')).toBe(true);
  });

  it('useThisComputer: the host starts again and the window loads the app, which gets a fresh port; the server stays remembered', async () => {
    const e = await onServer();
    const win = e.windows[0]!;
    await shell(e, 'use-this-computer', `${origin}/`);
    expect(e.children).toHaveLength(2);
    expect(e.children[1]!.sent[0]!.message).toMatchObject({ type: 'init', dataDir: path.join(e.userData, 'data') });
    expect(win.loadURL).toHaveBeenLastCalledWith('app://anima/index.html');
    win.webContents.emit('dom-ready');
    expect(e.children[1]!.sent.at(-1)).toMatchObject({ message: { type: 'connect' } });
    expect(win.webContents.postMessage).toHaveBeenLastCalledWith('anima:port', null, [expect.objectContaining({ end: 'renderer' })]);
    expect(await shell(e, 'where', 'app://anima/index.html')).toMatchObject({ kind: 'local', server: { origin } });
    expect(JSON.parse(readFileSync(rememberedFile(e), 'utf8')).lastUsed).toBe('local');
  });

  it('refuses a bad link or a wrong certificate in words, and the host keeps running', async () => {
    const e = await launchReady();
    const win = e.windows[0]!;
    await expect(shell(e, 'use-server', 'app://anima/index.html', 'http://127.0.0.1/')).resolves.toMatchObject({
      ok: false,
      error: { code: 'invalid_link' },
    });
    const wrong = link.replace(/fp=[0-9a-f]+/, `fp=${otherCertificate.fingerprint.replace(/:/g, '')}`);
    await expect(shell(e, 'use-server', 'app://anima/index.html', wrong)).resolves.toMatchObject({
      ok: false,
      error: { code: 'certificate_mismatch' },
    });
    expect(requests).toEqual([]); // the mismatch sent nothing
    expect(e.children[0]!.sent.some((s) => s.message.type === 'close')).toBe(false);
    expect(win.loadURL).toHaveBeenCalledTimes(1);
    expect(existsSync(rememberedFile(e))).toBe(false);
  });

  it('at launch on a remembered server: the window opens on it and this computer’s host is not started', async () => {
    const e = makeElectronWithRemembered({ origin, fingerprint: certificate.fingerprint, lastUsed: 'server' });
    await startLaunched(e);
    expect(e.utilityProcess.fork).not.toHaveBeenCalled();
    expect(e.windows[0]!.loadURL).toHaveBeenCalledWith(`${origin}/`); // no pairing fragment: the page keeps its token
    expect(requests).toEqual(['GET /manifest.webmanifest']);
    expect(await shell(e, 'where', `${origin}/`)).toMatchObject({ kind: 'server', server: { origin } });
  });

  it('at launch, a remembered server that does not answer: this computer’s app, saying so', async () => {
    const closed = await closedPort();
    const e = makeElectronWithRemembered({ origin: `https://127.0.0.1:${closed}`, fingerprint: certificate.fingerprint, lastUsed: 'server' });
    await startLaunched(e);
    expect(e.utilityProcess.fork).toHaveBeenCalledTimes(1);
    expect(e.windows[0]!.loadURL).toHaveBeenCalledWith('app://anima/index.html');
    expect(await shell(e, 'where', 'app://anima/index.html')).toMatchObject({
      kind: 'local',
      server: { origin: `https://127.0.0.1:${closed}` },
      serverUnreachable: true,
    });
  });

  it('a server page that fails to load brings the window back to this computer (an aborted load does not)', async () => {
    const e = makeElectronWithRemembered({ origin, fingerprint: certificate.fingerprint, lastUsed: 'server' });
    await startLaunched(e);
    const win = e.windows[0]!;
    win.webContents.emit('did-fail-load', {}, -3, 'ERR_ABORTED', `${origin}/`, true);
    win.webContents.emit('did-fail-load', {}, -102, 'ERR_CONNECTION_REFUSED', 'https://elsewhere.example/', false);
    expect(e.utilityProcess.fork).not.toHaveBeenCalled();
    win.webContents.emit('did-fail-load', {}, -102, 'ERR_CONNECTION_REFUSED', `${origin}/`, true);
    await vi.waitFor(() => expect(win.loadURL).toHaveBeenLastCalledWith('app://anima/index.html'));
    expect(e.utilityProcess.fork).toHaveBeenCalledTimes(1);
    expect(await shell(e, 'where', 'app://anima/index.html')).toMatchObject({ kind: 'local', serverUnreachable: true });
    win.webContents.emit('dom-ready');
    expect(win.webContents.postMessage).toHaveBeenCalledWith('anima:port', null, [expect.objectContaining({ end: 'renderer' })]);
  });

  it('forgetServer: back to this computer, the origin’s storage cleared, the file deleted, the pin removed', async () => {
    const e = await onServer();
    await shell(e, 'forget-server', `${origin}/`);
    expect(e.session.defaultSession.clearStorageData).toHaveBeenCalledWith({ origin });
    expect(existsSync(rememberedFile(e))).toBe(false);
    expect(e.session.defaultSession.setCertificateVerifyProc).toHaveBeenLastCalledWith(null);
    expect(e.children).toHaveLength(2);
    expect(e.windows[0]!.loadURL).toHaveBeenLastCalledWith('app://anima/index.html');
    expect(await shell(e, 'where', 'app://anima/index.html')).toEqual({ kind: 'local', server: null });
  });

  it('reopenServer after a fallback: the host stops again and the window goes back to the server', async () => {
    const e = makeElectronWithRemembered({ origin, fingerprint: certificate.fingerprint, lastUsed: 'server' });
    await startLaunched(e);
    const win = e.windows[0]!;
    win.webContents.emit('did-fail-load', {}, -102, 'ERR_CONNECTION_REFUSED', `${origin}/`, true);
    await vi.waitFor(() => expect(e.children).toHaveLength(1));
    const reply = shell(e, 'reopen-server', 'app://anima/index.html');
    await hostCloses(e.children[0]!);
    await expect(reply).resolves.toEqual({ ok: true, value: null });
    expect(win.loadURL).toHaveBeenLastCalledWith(`${origin}/`);
    expect(await shell(e, 'where', `${origin}/`)).toMatchObject({ kind: 'server', server: { origin, since: '2026-01-02T03:04:05.000Z' } });
  });

  it('a link to another server forgets the one before, with what the window kept for it', async () => {
    const e = makeElectronWithRemembered({ origin: 'https://192.168.77.9:8443', fingerprint: otherCertificate.fingerprint, lastUsed: 'local' });
    await startLaunched(e);
    expect(e.utilityProcess.fork).toHaveBeenCalledTimes(1);
    const reply = shell(e, 'use-server', 'app://anima/index.html', link);
    await hostCloses(e.children[0]!);
    await expect(reply).resolves.toEqual({ ok: true, value: null });
    expect(e.session.defaultSession.clearStorageData).toHaveBeenCalledWith({ origin: 'https://192.168.77.9:8443' });
    expect(JSON.parse(readFileSync(rememberedFile(e), 'utf8'))).toMatchObject({ origin, lastUsed: 'server' });
  });

  function makeElectronWithRemembered(state: { origin: string; fingerprint: string; lastUsed: 'server' | 'local' }) {
    const e = makeElectron();
    writeFileSync(path.join(e.userData, 'remote-server.json'), JSON.stringify({ ...state, since: '2026-01-02T03:04:05.000Z' }));
    return e;
  }

  async function startLaunched(e: ReturnType<typeof makeElectron>) {
    fake.current = e;
    vi.resetModules();
    await import('./main.js');
    e.ready();
    await vi.waitFor(() => expect(e.windows).toHaveLength(1), { timeout: 30_000 });
  }

  async function closedPort(): Promise<number> {
    const probe = createNetServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    return port;
  }
});
