// The preload against a mocked `electron`: what it exposes, and that calls reach a host through the
// port main posts (a worker_threads MessageChannel standing in for Chromium's).
import { EventEmitter } from 'node:events';
import { MessageChannel } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, type AnimaApi } from '../../shared/api.js';
import type { AnimaBridge } from '../../shared/bridge.js';
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

let bridge: AnimaBridge;
beforeEach(async () => {
  electron.exposed.clear();
  electron.ipc = Object.assign(new EventEmitter(), { invoke: vi.fn(async () => undefined) });
  vi.resetModules();
  await import('./preload.js');
  bridge = electron.exposed.get('anima') as AnimaBridge;
});
afterEach(() => {
  for (const c of channels.splice(0)) {
    c.port1.close();
    c.port2.close();
  }
});

describe('preload', () => {
  it('exposes window.anima with exactly the bridge', () => {
    expect([...electron.exposed.keys()]).toEqual(['anima']);
    expect(Object.keys(bridge).sort()).toEqual(['invoke', 'onEvent', 'openExternal']);
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
