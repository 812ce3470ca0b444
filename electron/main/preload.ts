// Sandboxed preload (bundled to one CommonJS file: a sandboxed preload can require only `electron`).
// It gives the page window.anima and window.animaDesktop and nothing else: no ipcRenderer, no ports,
// no raw events.
//
// window.anima (this computer's host) exists only on our own app:// page. Main posts a MessagePort
// ('anima:port') each time our page loads, and again after a host restart; calls then travel straight
// to the host's utility process over that port, never through main. On the person's paired server's
// pages (the window as a client of it) the page talks to its server over HTTPS, and this preload
// neither exposes window.anima nor listens for a port.
//
// window.animaDesktop (shared/bridge.ts DesktopShell) is on every page of the window: where the app
// is, and moving between this computer and the paired server. Each method asks main, which checks
// the sender (our window's top frame, on our page or on the server's while the window is there).
import { contextBridge, ipcRenderer } from 'electron';
import type { AnimaBridge, BridgeReply, DesktopShell, DesktopWhere } from '../../shared/bridge.js';
import { HOST_GONE, createPortClient, wireFromDomPort } from '../host-process/port-protocol.js';
import { isAppUrl } from './app-url.js';
import { DESKTOP_CHANNELS } from './desktop-channels.js';

if (isAppUrl(globalThis.location?.href ?? '')) {
  const client = createPortClient();

  ipcRenderer.on('anima:port', (event) => {
    const port = event.ports[0];
    if (port) client.attach(wireFromDomPort(port));
  });
  ipcRenderer.on('anima:host-down', () => client.detach(HOST_GONE, false));

  const bridge = {
    invoke: (method: string, input: unknown) => client.invoke(method, input),
    onEvent: (listener: (name: string, payload: unknown) => void) => client.onEvent(listener),
    openExternal: async (url: string) => {
      await ipcRenderer.invoke('anima:open-external', url);
    },
  } satisfies AnimaBridge;

  contextBridge.exposeInMainWorld('anima', bridge);
}

const desktop = {
  where: async () => (await ipcRenderer.invoke(DESKTOP_CHANNELS.where)) as DesktopWhere,
  useServer: async (link: string) => (await ipcRenderer.invoke(DESKTOP_CHANNELS.useServer, link)) as BridgeReply,
  reopenServer: async () => (await ipcRenderer.invoke(DESKTOP_CHANNELS.reopenServer)) as BridgeReply,
  useThisComputer: async () => {
    await ipcRenderer.invoke(DESKTOP_CHANNELS.useThisComputer);
  },
  forgetServer: async () => {
    await ipcRenderer.invoke(DESKTOP_CHANNELS.forgetServer);
  },
} satisfies DesktopShell;

contextBridge.exposeInMainWorld('animaDesktop', desktop);
