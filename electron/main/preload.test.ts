// The preload against a mocked `electron`: what it exposes, and that calls reach a host through the
// port main posts (a worker_threads MessageChannel standing in for Chromium's).
import { EventEmitter } from 'node:events';
import { MessageChannel } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, type AnimaApi } from '../../shared/api.js';
import type { AnimaBridge, DesktopShell } from '../../shared/bridge.js';
import type { Host } from '../host/types.js';
import type { HostEventListener } from '../events/events.js';
import { HOST_GONE, wireFromDomPort, type DomPortLike } from '../host-process/port-protocol.js';
import { serveHost } from '../host-process/port-server.js';

const electron = vi.hoisted(() => ({
  exposed: new Map<string, unknown>(),
  ipc: null as null | (import('node:events').EventEmitter & { invoke: (...args: unknown[]) => Promise<unknown> }),
}));

vi.mock('electron', () => ({
  contextBridge: { exposeInMainWorld: (key: string, api: unknown) => electron.exposed.set(key, api) },
  get ipcRenderer() {
    return electron.ipc;
  },
}));

function fakeHost(): Host & { emit(event: string, payload: unknown): void } {
  const listeners = new Set<HostEventListener>();
  return {
    api: {} as AnimaApi,
    dataDir: '/fake',
    async call(method) {
      if (method === 'app.info') return { mode: 'electron' };
      throw new ApiError('unknown_method', method);
    },
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    emit(event, payload) {
      for (const l of listeners) (l as (e: string, p: unknown) => void)(event, payload);
    },
    async close() {},
  };
}

const channels: MessageChannel[] = [];
function postPort(host: Host) {
  const channel = new MessageChannel();
  channels.push(channel);
  serveHost(Promise.resolve(host), wireFromDomPort(channel.port1 as unknown as DomPortLike), () => {});
  electron.ipc!.emit('anima:port', { ports: [channel.port2], sender: electron.ipc });
}

/** Loads the preload as a page at `href` would (the sandboxed preload sees the page's location). */
async function loadPreload(href: string): Promise<void> {
  electron.exposed.clear();
  electron.ipc = Object.assign(new EventEmitter(), { invoke: vi.fn(async () => undefined) });
  vi.stubGlobal('location', new URL(href));
  vi.resetModules();
  await import('./preload.js');
}

let bridge: AnimaBridge;
beforeEach(async () => {
  await loadPreload('app://anima/index.html');
  bridge = electron.exposed.get('anima') as AnimaBridge;
});
afterEach(() => {
  vi.unstubAllGlobals();
  for (const c of channels.splice(0)) {
    c.port1.close();
    c.port2.close();
  }
});

describe('preload', () => {
  it('exposes window.anima with exactly the bridge, and window.animaDesktop, on our own page', () => {
    expect([...electron.exposed.keys()]).toEqual(['anima', 'animaDesktop']);
    expect(Object.keys(bridge).sort()).toEqual(['invoke', 'onEvent', 'openExternal']);
    expect(Object.keys(electron.exposed.get('animaDesktop') as object).sort()).toEqual([
      'forgetServer',
      'reopenServer',
      'useServer',
      'useThisComputer',
      'where',
    ]);
    expect(electron.ipc!.listenerCount('anima:port')).toBe(1);
  });

  it("on the paired server's page: window.animaDesktop only, and no ear for this computer's host port", async () => {
    for (const href of ['https://192.168.1.20:8443/', 'https://192.168.1.20:8443/#pair=x&fp=ab', 'https://anima.evil.example/']) {
      await loadPreload(href);
      expect([...electron.exposed.keys()]).toEqual(['animaDesktop']);
      expect(electron.ipc!.listenerCount('anima:port')).toBe(0);
      expect(electron.ipc!.listenerCount('anima:host-down')).toBe(0);
    }
  });

  it('window.animaDesktop asks main on its channels and hands back only the answer', async () => {
    await loadPreload('https://192.168.1.20:8443/');
    const desktop = electron.exposed.get('animaDesktop') as DesktopShell;
    const invoke = vi.mocked(electron.ipc!.invoke);
    const where = { kind: 'server', server: { origin: 'https://192.168.1.20:8443', fingerprint: 'AB', since: '2026-01-01T00:00:00.000Z' } };
    invoke.mockResolvedValueOnce(where);
    await expect(desktop.where()).resolves.toEqual(where);
    invoke.mockResolvedValueOnce({ ok: false, error: { code: 'invalid_link', message: 'no' } });
    await expect(desktop.useServer('nope')).resolves.toEqual({ ok: false, error: { code: 'invalid_link', message: 'no' } });
    invoke.mockResolvedValueOnce({ ok: true, value: null });
    await expect(desktop.reopenServer()).resolves.toEqual({ ok: true, value: null });
    invoke.mockResolvedValueOnce('ignored');
    await expect(desktop.useThisComputer()).resolves.toBeUndefined();
    await expect(desktop.forgetServer()).resolves.toBeUndefined();
    expect(invoke.mock.calls).toEqual([
      ['anima-desktop:where'],
      ['anima-desktop:use-server', 'nope'],
      ['anima-desktop:reopen-server'],
      ['anima-desktop:use-this-computer'],
      ['anima-desktop:forget-server'],
    ]);
  });

  it('queues calls until main posts the port, then answers them', async () => {
    const early = bridge.invoke('app.info', {});
    postPort(fakeHost());
    await expect(early).resolves.toEqual({ ok: true, value: { mode: 'electron' } });
    await expect(bridge.invoke('nope', {})).resolves.toMatchObject({ ok: false, error: { code: 'unknown_method' } });
  });

  it('hands listeners the event name and payload, never the raw IPC event', async () => {
    const host = fakeHost();
    postPort(host);
    const seen: unknown[][] = [];
    bridge.onEvent((...args) => seen.push(args));
    await bridge.invoke('app.info', {});
    host.emit('conversations.changed', { conversationId: 'c1' });
    await vi.waitFor(() => expect(seen).toEqual([['conversations.changed', { conversationId: 'c1' }]]));
  });

  it('fails calls at once after main reports the host gone', async () => {
    electron.ipc!.emit('anima:host-down', {});
    await expect(bridge.invoke('app.info', {})).resolves.toEqual({ ok: false, error: HOST_GONE });
  });

  it('asks main to open links and reports main refusing', async () => {
    await bridge.openExternal('https://example.com/');
    expect(electron.ipc!.invoke).toHaveBeenCalledWith('anima:open-external', 'https://example.com/');
    vi.mocked(electron.ipc!.invoke).mockRejectedValueOnce(new Error('Only http and https links can be opened.'));
    await expect(bridge.openExternal('file:///etc/passwd')).rejects.toThrow('http');
  });
});
