// Sandboxed preload (bundled to one CommonJS file: a sandboxed preload can require only `electron`).
// It gives the page window.anima and nothing else: no ipcRenderer, no ports, no raw events.
//
// Main posts a MessagePort ('anima:port') each time our page loads, and again after a host restart;
// calls then travel straight to the host's utility process over that port, never through main.
import { contextBridge, ipcRenderer } from 'electron';
import type { AnimaBridge } from '../../shared/bridge.js';
import { HOST_GONE, createPortClient, wireFromDomPort } from '../host-process/port-protocol.js';

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
