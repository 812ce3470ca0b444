// The renderer ↔ host protocol over real ports: Node's own MessageChannel stands in for Electron's.
import { EventEmitter } from 'node:events';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, type ApiEventName, type ApiEvents, type AnimaApi } from '../../shared/api.js';
import type { Host } from '../host/types.js';
import type { HostEventArgs, HostEventListener } from '../events/events.js';
import {
  CONNECTION_RESET,
  HOST_GONE,
  createPortClient,
  wireFromDomPort,
  wireFromEmitterPort,
  type DomPortLike,
  type EmitterPortLike,
  type Wire,
} from './port-protocol.js';
import { INTERNAL_ERROR_MESSAGE, serveHost, toErrorShape } from './port-server.js';

class FakeHost implements Host {
  readonly api = {} as AnimaApi;
  readonly dataDir = '/fake';
  readonly listeners = new Set<HostEventListener>();
  calls: Array<{ method: string; input: unknown }> = [];
  private gates = new Map<string, Promise<void>>();

  /** Make `method` wait until the returned function is called. */
  hold(method: string): () => void {
    let release!: () => void;
    this.gates.set(method, new Promise<void>((r) => (release = r)));
    return release;
  }

  async call(method: string, input: unknown): Promise<unknown> {
    this.calls.push({ method, input });
    await this.gates.get(method);
    switch (method) {
      case 'app.info':
        return { version: '0.1.0', mode: 'electron' };
      case 'conversations.get':
        throw new ApiError('not_found', 'No such conversation', 'id');
      case 'settings.update':
        throw new ApiError('invalid_input', 'sleepTime: expected HH:MM', 'sleepTime');
      case 'explode':
        throw new TypeError('cannot read properties of undefined (secret detail)');
      case 'unclonable':
        return { fn: () => 1 };
      default:
        throw new ApiError('unknown_method', `Unknown method ${method}`);
    }
  }

  on(listener: HostEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit<E extends ApiEventName>(event: E, payload: ApiEvents[E]): void {
    for (const l of this.listeners) l(...([event, payload] as HostEventArgs));
  }

  async close(): Promise<void> {}
}

const domWire = (port: MessagePort) => wireFromDomPort(port as unknown as DomPortLike);
const opened: MessagePort[] = [];

function connect(host: Host | Promise<Host>, log = vi.fn()) {
  const { port1, port2 } = new MessageChannel();
  opened.push(port1, port2);
  const stop = serveHost(Promise.resolve(host), domWire(port1), log);
  const client = createPortClient();
  client.attach(domWire(port2));
  return { client, stop, log, hostPort: port1, rendererPort: port2 };
}

const tick = () => new Promise((r) => setTimeout(r, 20));

afterEach(() => {
  for (const p of opened.splice(0)) p.close();
});

describe('port protocol', () => {
  it('answers a call with its value', async () => {
    const host = new FakeHost();
    const { client } = connect(host);
    await expect(client.invoke('app.info', {})).resolves.toEqual({ ok: true, value: { version: '0.1.0', mode: 'electron' } });
    expect(host.calls).toEqual([{ method: 'app.info', input: {} }]);
  });

  it('keeps the code and field of an ApiError', async () => {
    const { client } = connect(new FakeHost());
    await expect(client.invoke('conversations.get', { id: 'x' })).resolves.toEqual({
      ok: false,
      error: { code: 'not_found', message: 'No such conversation', field: 'id' },
    });
    await expect(client.invoke('settings.update', { sleepTime: '25:00' })).resolves.toMatchObject({
      ok: false,
      error: { code: 'invalid_input', field: 'sleepTime' },
    });
  });

  it('turns any other error into a generic internal error and logs the detail', async () => {
    const { client, log } = connect(new FakeHost());
    const reply = await client.invoke('explode', {});
    expect(reply).toEqual({ ok: false, error: { code: 'internal', message: INTERNAL_ERROR_MESSAGE } });
    expect(JSON.stringify(reply)).not.toContain('secret detail');
    expect(log).toHaveBeenCalledWith('error', expect.stringContaining('secret detail'));
  });

  it('still answers when the value cannot be cloned', async () => {
    const { client, log } = connect(new FakeHost());
    await expect(client.invoke('unclonable', {})).resolves.toMatchObject({ ok: false, error: { code: 'internal' } });
    expect(log).toHaveBeenCalled();
  });

  it('correlates concurrent calls by id, whatever order they finish in', async () => {
    const host = new FakeHost();
    const release = host.hold('app.info');
    const { client } = connect(host);
    const slow = client.invoke('app.info', {});
    const fast = client.invoke('conversations.get', { id: 'a' });
    await expect(fast).resolves.toMatchObject({ ok: false, error: { code: 'not_found' } });
    release();
    await expect(slow).resolves.toMatchObject({ ok: true });
  });

  it('pushes host events to every listener and stops after unsubscribe', async () => {
    const host = new FakeHost();
    const { client } = connect(host);
    const seen: Array<[string, unknown]> = [];
    const off = client.onEvent((name, payload) => seen.push([name, payload]));
    await client.invoke('app.info', {}); // the host has subscribed by the time a call completes
    host.emit('chat.delta', { conversationId: 'c', messageId: 'm', text: 'Hel' });
    await tick();
    off();
    host.emit('chat.delta', { conversationId: 'c', messageId: 'm', text: 'lo' });
    await tick();
    expect(seen).toEqual([['chat.delta', { conversationId: 'c', messageId: 'm', text: 'Hel' }]]);
  });

  it('keeps delivering events when one listener throws', async () => {
    const host = new FakeHost();
    const { client } = connect(host);
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {});
    const good = vi.fn();
    client.onEvent(() => {
      throw new Error('renderer bug');
    });
    client.onEvent(good);
    await client.invoke('app.info', {});
    host.emit('conversations.changed', { conversationId: 'c' });
    await tick();
    expect(good).toHaveBeenCalledWith('conversations.changed', { conversationId: 'c' });
    spy.mockRestore();
  });

  it('queues calls made before the port arrives', async () => {
    const host = new FakeHost();
    const client = createPortClient();
    const early = client.invoke('app.info', { early: true });
    await tick();
    expect(host.calls).toEqual([]);
    const { port1, port2 } = new MessageChannel();
    opened.push(port1, port2);
    serveHost(Promise.resolve(host), domWire(port1), vi.fn());
    client.attach(domWire(port2));
    await expect(early).resolves.toMatchObject({ ok: true });
    expect(host.calls).toEqual([{ method: 'app.info', input: { early: true } }]);
  });

  it('waits for a host that is still starting, and reports a failed start to every call', async () => {
    let finish!: (h: Host) => void;
    const starting = new Promise<Host>((r) => (finish = r));
    const { client } = connect(starting);
    const call = client.invoke('app.info', {});
    await tick();
    finish(new FakeHost());
    await expect(call).resolves.toMatchObject({ ok: true });

    const failed = Promise.reject(new ApiError('data_dir_locked', 'Another Anima is using this data folder.'));
    const second = connect(failed);
    await expect(second.client.invoke('app.info', {})).resolves.toEqual({
      ok: false,
      error: { code: 'data_dir_locked', message: 'Another Anima is using this data folder.' },
    });
  });

  it('refuses input the structured clone cannot carry without involving the host', async () => {
    const host = new FakeHost();
    const { client } = connect(host);
    await expect(client.invoke('app.info', { f: () => 1 })).resolves.toMatchObject({
      ok: false,
      error: { code: 'invalid_input' },
    });
    expect(host.calls).toEqual([]);
  });

  it('ignores malformed messages on the host side', async () => {
    const host = new FakeHost();
    const { hostPort, rendererPort, log } = connect(host);
    void hostPort;
    rendererPort.postMessage({ method: 'app.info' });
    rendererPort.postMessage('hello');
    await tick();
    expect(host.calls).toEqual([]);
    expect(log).toHaveBeenCalledWith('warn', expect.stringContaining('malformed'));
  });

  it('fails calls in flight when a new port replaces the old one, and uses the new one', async () => {
    const host = new FakeHost();
    host.hold('app.info');
    const { client } = connect(host);
    const stuck = client.invoke('app.info', {});
    await tick();

    const restarted = new FakeHost();
    const { port1, port2 } = new MessageChannel();
    opened.push(port1, port2);
    serveHost(Promise.resolve(restarted), domWire(port1), vi.fn());
    client.attach(domWire(port2));
    await expect(stuck).resolves.toEqual({ ok: false, error: CONNECTION_RESET });
    await expect(client.invoke('conversations.get', { id: 'x' })).resolves.toMatchObject({ error: { code: 'not_found' } });
  });

  it('after a host-down message, fails at once unless a restart is coming', async () => {
    const client = createPortClient();
    const waiting = client.invoke('app.info', {});
    client.detach(HOST_GONE, false);
    await expect(waiting).resolves.toEqual({ ok: false, error: HOST_GONE });
    await expect(client.invoke('app.info', {})).resolves.toEqual({ ok: false, error: HOST_GONE });

    client.detach(CONNECTION_RESET, true);
    const queued = client.invoke('app.info', {});
    const { port1, port2 } = new MessageChannel();
    opened.push(port1, port2);
    serveHost(Promise.resolve(new FakeHost()), domWire(port1), vi.fn());
    client.attach(domWire(port2));
    await expect(queued).resolves.toMatchObject({ ok: true });
  });

  it('stops pushing events once the renderer end closes', async () => {
    const host = new FakeHost();
    const { client, rendererPort } = connect(host);
    await client.invoke('app.info', {});
    expect(host.listeners.size).toBe(1);
    rendererPort.close();
    await tick();
    expect(host.listeners.size).toBe(0);
  });
});

describe('toErrorShape', () => {
  it('passes ApiError through and hides the rest', () => {
    const log = vi.fn();
    expect(toErrorShape(new ApiError('conflict', 'taken'), 'm', log)).toEqual({ code: 'conflict', message: 'taken' });
    expect(toErrorShape('a string', 'm', log)).toEqual({ code: 'internal', message: INTERNAL_ERROR_MESSAGE });
    expect(log).toHaveBeenCalledTimes(1);
  });
});

describe('wireFromEmitterPort (the shape of Electron MessagePortMain)', () => {
  class FakeMainPort extends EventEmitter {
    started = false;
    closed = false;
    sent: unknown[] = [];
    postMessage(message: unknown) {
      this.sent.push(message);
    }
    start() {
      this.started = true;
    }
    close() {
      this.closed = true;
    }
  }

  it('unwraps message events, starts the port, and reports close', () => {
    const port = new FakeMainPort();
    const wire: Wire = wireFromEmitterPort(port as unknown as EmitterPortLike);
    const got: unknown[] = [];
    const off = wire.onMessage((d) => got.push(d));
    expect(port.started).toBe(true);
    port.emit('message', { data: { id: 1 }, ports: [] });
    off();
    port.emit('message', { data: { id: 2 }, ports: [] });
    expect(got).toEqual([{ id: 1 }]);

    const closed = vi.fn();
    wire.onClose(closed);
    port.emit('close');
    expect(closed).toHaveBeenCalledTimes(1);
    wire.post('x');
    wire.close();
    expect(port.sent).toEqual(['x']);
    expect(port.closed).toBe(true);
  });
});
