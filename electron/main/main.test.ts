// The main-process glue (main.ts + window.ts) against a mocked `electron`: Electron's binary
// cannot run in CI, but the wiring — what is registered, in which order, with which options — can be
// checked. Each test imports main.ts afresh, as a launch would.
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

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
    loadURL = vi.fn(async () => {});
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
