// The one Anima window: locked-down web preferences and a remembered size and position.
import { BrowserWindow, nativeTheme, screen } from 'electron';
import { APP_ENTRY_URL, isAppUrl } from './security-rules.js';
import { loadWindowState, saveWindowState, stateFromWindow, MIN_SIZE } from './window-state.js';

export interface AnimaWindow {
  window: BrowserWindow;
  /** Resolves once the last size and position are on disk. */
  flushState(): Promise<void>;
}

const SAVE_DELAY_MS = 500;

export interface MainWindowOptions {
  preload: string;
  stateFile: string;
  /** Each time a page of ours has loaded (again): the moment to hand it a fresh host port. */
  onPageReady(window: BrowserWindow): void;
  /** The first page: our app (default), or the person's paired server (remote-server.ts). */
  url?: string;
  /** A page did not load (did-fail-load): the paired server may not have answered. */
  onLoadFailed?(errorCode: number, url: string, isMainFrame: boolean): void;
}

export async function createMainWindow(options: MainWindowOptions): Promise<AnimaWindow> {
  const state = await loadWindowState(options.stateFile, screen.getAllDisplays());
  const window = new BrowserWindow({
    ...(state.x !== undefined && state.y !== undefined ? { x: state.x, y: state.y } : {}),
    width: state.width,
    height: state.height,
    minWidth: MIN_SIZE.width,
    minHeight: MIN_SIZE.height,
    title: 'Anima',
    show: false, // shown on ready-to-show, so the first paint is the app and not a white rectangle
    backgroundColor: nativeTheme.shouldUseDarkColors ? '#18181b' : '#ffffff',
    autoHideMenuBar: true,
    webPreferences: {
      preload: options.preload,
      // Checklist #2–#4: the page gets no Node, its own JS world, and Chromium's sandbox.
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      // #6, #8, #12
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      experimentalFeatures: false,
      navigateOnDragDrop: false,
    },
  });
  if (state.maximized) window.maximize();
  window.once('ready-to-show', () => window.show());

  let lastSave: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | null = null;
  const save = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (window.isDestroyed()) return;
    const next = stateFromWindow(window.getNormalBounds(), window.isMaximized());
    lastSave = lastSave
      .then(() => saveWindowState(options.stateFile, next))
      .catch((err: Error) => console.warn(`[main] could not save the window state: ${err.message}`));
  };
  const saveSoon = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(save, SAVE_DELAY_MS);
  };
  window.on('resize', saveSoon);
  window.on('move', saveSoon);
  window.on('maximize', save);
  window.on('unmaximize', save);
  window.on('close', save);

  // The preload's listener exists before any page script runs, so a port posted now is not lost;
  // a reload gets a new one (the host drops the old when its port closes).
  window.webContents.on('dom-ready', () => {
    if (isAppUrl(window.webContents.getURL())) options.onPageReady(window);
  });
  window.webContents.on('did-fail-load', (_event, errorCode, _description, url, isMainFrame) => {
    options.onLoadFailed?.(errorCode, url, isMainFrame);
  });
  const first = options.url ?? APP_ENTRY_URL;
  window.loadURL(first).catch((err: Error) => {
    console.error(`[main] could not load ${first}: ${err.message}`);
  });
  return { window, flushState: () => lastSave };
}
