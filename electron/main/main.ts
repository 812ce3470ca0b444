// Electron main process: glue only. Windows, the app:// protocol, security and the host's utility
// process are wired here; the logic lives in the modules imported below. Main never runs SQL.
import path from 'node:path';
import { BrowserWindow, MessageChannelMain, app, dialog, ipcMain, protocol, safeStorage, session, shell, utilityProcess } from 'electron';
import { createAppRequestHandler } from './app-protocol.js';
import { HostSupervisor, type HostExit } from './host-supervisor.js';
import { DESKTOP_CHANNELS } from './desktop-channels.js';
import { RemoteServer } from './remote-server.js';
import { createOpenExternal, hardenWebContents, lockPermissions } from './security.js';
import { createMainWindow, type AnimaWindow } from './window.js';
import type { Log } from '../host-process/port-server.js';
import { APP_SCHEME, createIpcHandle, isAppUrl, isWindowPage } from './security-rules.js';
import { windowStateFile } from './window-state.js';

const log: Log = (level, message) => console[level](`[main] ${message}`);

// Bundled to dist/electron/main.cjs; the other artifacts sit beside it.
const distDir = path.resolve(__dirname, '..');
const preloadPath = path.join(__dirname, 'preload.cjs');
const hostEntryPath = path.join(__dirname, 'host-process.mjs');
const rendererDir = path.join(distDir, 'renderer');

// One data dir, one instance: with ANIMA_DATA_DIR set (e2e tests, a second profile) Chromium's own
// profile and the single-instance lock move beside the data, so runs never collide.
const envDataDir = process.env.ANIMA_DATA_DIR?.trim();
if (envDataDir) app.setPath('userData', path.join(path.resolve(envDataDir), 'electron-profile'));
const dataDir = envDataDir ? path.resolve(envDataDir) : path.join(app.getPath('userData'), 'data');

// Must precede the ready event. `standard` gives app:// a real origin; `secure` makes it a secure
// context; `corsEnabled` lets Vite's `<script type="module" crossorigin>` load from it.
protocol.registerSchemesAsPrivileged([
  { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, corsEnabled: true, codeCache: true } },
]);
app.enableSandbox();

if (!app.requestSingleInstanceLock()) {
  // The first instance is told through 'second-instance' and brings its window forward.
  app.quit();
} else {
  run();
}

function run(): void {
  let main: AnimaWindow | null = null;
  let host: HostSupervisor | null = null;
  // The window's last state save may still be in flight after it closed; quit waits for it.
  let flushWindowState: () => Promise<void> = async () => {};
  // Where the window's app is: this computer's host, or the person's paired server (set up when ready).
  let place: RemoteServer | null = null;
  const serverOrigin = () => place?.serverOrigin() ?? null;

  const openExternal = createOpenExternal(
    (url) => shell.openExternal(url),
    (m) => log('warn', m),
  );
  app.on('web-contents-created', (_event, contents) => hardenWebContents(contents, openExternal, serverOrigin));

  const isOurWebContents = (id: number) => !!main && !main.window.isDestroyed() && main.window.webContents.id === id;
  const refused = (channel: string, event: Electron.IpcMainInvokeEvent) =>
    log('warn', `refused ${channel} from ${event.senderFrame?.url.split('#')[0] ?? 'a destroyed frame'}`);
  // window.anima's channels: our own page only. window.animaDesktop's: also the paired server's page while the window is on it.
  const handle = createIpcHandle(ipcMain, isOurWebContents, refused);
  const handleShell = createIpcHandle(ipcMain, isOurWebContents, refused, (url) => isWindowPage(url, serverOrigin()));
  handle('anima:open-external', async (url) => {
    if (!openExternal(typeof url === 'string' ? url : '')) throw new Error('Only http and https links can be opened.');
  });
  const ready = () => {
    if (!place) throw new Error('Anima is still starting.');
    return place;
  };
  handleShell(DESKTOP_CHANNELS.where, () => ready().where());
  handleShell(DESKTOP_CHANNELS.useServer, (link) => ready().useServer(link));
  handleShell(DESKTOP_CHANNELS.reopenServer, () => ready().reopenServer());
  handleShell(DESKTOP_CHANNELS.useThisComputer, () => ready().useThisComputer());
  handleShell(DESKTOP_CHANNELS.forgetServer, () => ready().forgetServer());

  function connect(window: BrowserWindow): void {
    if (window.isDestroyed()) return;
    // This computer's host only ever reaches our own page: never the paired server's, nor any other.
    if (!isAppUrl(window.webContents.getURL())) return;
    const port = host?.connect();
    if (port) window.webContents.postMessage('anima:port', null, [port]);
    // A page reloaded after the host gave up must fail its calls, not wait for a port forever.
    else window.webContents.send('anima:host-down');
  }

  function hostExited({ code, restarted }: HostExit): void {
    const window = main && !main.window.isDestroyed() ? main.window : null;
    if (restarted) {
      if (window) connect(window);
      void showMessage(window, {
        type: 'warning',
        message: "Anima's background process stopped unexpectedly and has been restarted.",
        detail: `A reply that was being written may be incomplete. (exit code ${code})`,
      });
      return;
    }
    window?.webContents.send('anima:host-down');
    void showMessage(window, {
      type: 'error',
      message: "Anima's background process stopped again.",
      detail: `Your conversations are safe on disk. Please quit and reopen Anima. (exit code ${code})`,
      buttons: ['Quit Anima', 'Keep Window Open'],
      defaultId: 0,
    }).then((response) => {
      if (response === 0) app.quit();
    });
  }

  async function openWindow(): Promise<void> {
    main = await createMainWindow({
      preload: preloadPath,
      stateFile: windowStateFile(app.getPath('userData')),
      onPageReady: connect,
      url: place?.currentUrl(),
      onLoadFailed: (code, url, isMainFrame) => place?.pageFailed(code, url, isMainFrame),
    });
    flushWindowState = main.flushState;
    main.window.on('closed', () => {
      main = null;
    });
  }

  app.on('second-instance', () => {
    // On macOS the app may be running without a window.
    if (!main || main.window.isDestroyed()) {
      if (place) void openWindow();
      return;
    }
    if (main.window.isMinimized()) main.window.restore();
    main.window.show();
    main.window.focus();
  });

  app
    .whenReady()
    .then(async () => {
      protocol.handle(APP_SCHEME, createAppRequestHandler(rendererDir));
      lockPermissions(session.defaultSession, serverOrigin);

      const keychain = keychainAvailable();
      if (!keychain) log('warn', 'the OS keychain is unavailable: API keys will be kept in an owner-only file instead');
      host = new HostSupervisor({
        fork: () =>
          utilityProcess.fork(hostEntryPath, [], {
            serviceName: 'Anima host',
            stdio: 'inherit',
            // The bundled host cannot always find package.json for its version; tell it.
            env: { ...process.env, ANIMA_VERSION: app.getVersion() },
          }),
        createChannel: () => new MessageChannelMain(),
        dataDir,
        safeStorage: keychain ? safeStorage : null,
        log,
        onUnexpectedExit: hostExited,
      });
      const supervisor = host;
      place = new RemoteServer({
        userData: app.getPath('userData'),
        session: session.defaultSession,
        window: () => main?.window ?? null,
        startHost: () => supervisor.start(),
        stopHost: () => supervisor.stop(),
        log,
      });
      // Starts the host unless the window opens on the person's server (this computer's data folder stays closed then).
      await place.launch();
      await openWindow();

      app.on('activate', () => {
        // macOS keeps the app alive without windows; clicking the dock icon opens one again.
        if (!main) void openWindow();
      });
    })
    .catch((err: Error) => {
      dialog.showErrorBox('Anima could not start', err.stack ?? err.message);
      app.exit(1);
    });

  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });

  // Quit waits (at most CLOSE_TIMEOUT_MS) for the host to store streaming replies and close the
  // database, and for the window state to reach the disk.
  let shutdown: 'no' | 'running' | 'done' = 'no';
  app.on('will-quit', (event) => {
    if (shutdown === 'done') return;
    event.preventDefault();
    if (shutdown === 'running') return;
    shutdown = 'running';
    void Promise.allSettled([host?.close(), flushWindowState()]).then(() => {
      shutdown = 'done';
      app.quit();
    });
  });
}

/**
 * On Linux without a keyring Electron falls back to a hard-coded key ("basic_text"): that is not
 * OS encryption, so it counts as unavailable and the host uses its owner-only file honestly.
 */
function keychainAvailable(): boolean {
  try {
    if (!safeStorage.isEncryptionAvailable()) return false;
    return !(process.platform === 'linux' && safeStorage.getSelectedStorageBackend() === 'basic_text');
  } catch {
    return false;
  }
}

async function showMessage(window: BrowserWindow | null, options: Electron.MessageBoxOptions): Promise<number> {
  const result = window ? await dialog.showMessageBox(window, options) : await dialog.showMessageBox(options);
  return result.response;
}
