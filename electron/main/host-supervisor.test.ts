// HostSupervisor with a fake utility process: Electron itself cannot run here.
import { EventEmitter } from 'node:events';
import type { MessagePortMain, UtilityProcess } from 'electron';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HostSupervisor, type HostExit } from './host-supervisor.js';
import type { FromHost, ToHost } from '../host-process/parent-channel.js';

class FakeChild extends EventEmitter {
  sent: Array<{ message: ToHost; ports?: unknown[] }> = [];
  killed = false;
  postMessage(message: ToHost, ports?: unknown[]) {
    this.sent.push({ message, ports });
  }
  kill() {
    this.killed = true;
    setImmediate(() => this.emit('exit', 9));
    return true;
  }
  fromHost(message: FromHost) {
    this.emit('message', message);
  }
}

function setup(options: { safeStorage?: boolean } = {}) {
  const children: FakeChild[] = [];
  const exits: HostExit[] = [];
  const log = vi.fn();
  let channels = 0;
  const supervisor = new HostSupervisor({
    fork: () => {
      const child = new FakeChild();
      children.push(child);
      return child as unknown as UtilityProcess;
    },
    createChannel: () => {
      channels++;
      return {
        port1: { name: `host-end-${channels}` } as unknown as MessagePortMain,
        port2: { name: `renderer-end-${channels}` } as unknown as MessagePortMain,
      };
    },
    dataDir: '/data',
    safeStorage: options.safeStorage === false ? null : { encryptString: (s) => Buffer.from(`E${s}`), decryptString: (b) => b.toString().slice(1) },
    log,
    onUnexpectedExit: (e) => exits.push(e),
  });
  supervisor.start();
  return { supervisor, children, exits, log };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('HostSupervisor', () => {
  it('initialises the host with the data dir and the kind of secret storage available', () => {
    expect(setup().children[0]!.sent[0]!.message).toEqual({ type: 'init', dataDir: '/data', secretStorage: 'os-encrypted' });
    expect(setup({ safeStorage: false }).children[0]!.sent[0]!.message).toEqual({
      type: 'init',
      dataDir: '/data',
      secretStorage: 'owner-only-file',
    });
  });

  it('gives each connection its own channel: one end to the host, the other returned for the window', () => {
    const { supervisor, children } = setup();
    const port = supervisor.connect();
    expect(port).toEqual({ name: 'renderer-end-1' });
    expect(children[0]!.sent[1]).toEqual({ message: { type: 'connect' }, ports: [{ name: 'host-end-1' }] });
    expect(supervisor.connect()).toEqual({ name: 'renderer-end-2' });
  });

  it('answers safeStorage requests from the host', () => {
    const { children } = setup();
    const child = children[0]!;
    child.fromHost({ type: 'cipher', id: 4, op: 'encrypt', value: 'key' });
    expect(child.sent.at(-1)!.message).toEqual({
      type: 'cipher-result',
      id: 4,
      ok: true,
      value: Buffer.from('Ekey').toString('base64'),
    });
    child.fromHost({ type: 'cipher', id: 5, op: 'decrypt', value: Buffer.from('Ekey').toString('base64') });
    expect(child.sent.at(-1)!.message).toMatchObject({ id: 5, ok: true, value: 'key' });
  });

  it('refuses cipher requests when the keychain is unavailable', () => {
    const { children } = setup({ safeStorage: false });
    children[0]!.fromHost({ type: 'cipher', id: 1, op: 'encrypt', value: 'x' });
    expect(children[0]!.sent.at(-1)!.message).toMatchObject({ type: 'cipher-result', id: 1, ok: false });
  });

  it('restarts a crashed host once, then gives up', () => {
    const { supervisor, children, exits } = setup();
    children[0]!.emit('exit', 139);
    expect(exits).toEqual([{ code: 139, restarted: true }]);
    expect(children).toHaveLength(2);
    expect(children[1]!.sent[0]!.message).toMatchObject({ type: 'init' });
    expect(supervisor.running).toBe(true);

    children[1]!.emit('exit', 1);
    expect(exits).toEqual([
      { code: 139, restarted: true },
      { code: 1, restarted: false },
    ]);
    expect(children).toHaveLength(2);
    expect(supervisor.running).toBe(false);
    expect(supervisor.connect()).toBeNull();
  });

  it('closes gracefully: asks the host, resolves when it exits, and does not treat that as a crash', async () => {
    const { supervisor, children, exits } = setup();
    const child = children[0]!;
    const closing = supervisor.close();
    expect(child.sent.at(-1)!.message).toEqual({ type: 'close' });
    child.fromHost({ type: 'closed' });
    child.emit('exit', 0);
    await closing;
    expect(exits).toEqual([]);
    expect(child.killed).toBe(false);
    expect(supervisor.close()).toBe(closing);
  });

  it('kills a host that does not close within 5 s', async () => {
    vi.useFakeTimers();
    const { supervisor, children, exits, log } = setup();
    let done = false;
    const closing = supervisor.close().then(() => (done = true));
    await vi.advanceTimersByTimeAsync(4_900);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(200);
    await closing;
    expect(children[0]!.killed).toBe(true);
    expect(exits).toEqual([]);
    expect(log).toHaveBeenCalledWith('warn', expect.stringContaining('did not close'));
  });

  it('stops for the paired server and starts a fresh host afterwards, which connects and may restart once again', async () => {
    const { supervisor, children, exits } = setup();
    children[0]!.emit('exit', 139); // used up the one restart
    expect(children).toHaveLength(2);
    expect(() => supervisor.start()).toThrow(/already running/);

    const stopping = supervisor.stop();
    expect(supervisor.connect()).toBeNull(); // no new window port while it closes
    children[1]!.emit('exit', 0);
    await stopping;
    expect(supervisor.running).toBe(false);
    expect(supervisor.connect()).toBeNull();
    expect(exits).toEqual([{ code: 139, restarted: true }]); // the requested stop is not a crash

    supervisor.start();
    expect(children).toHaveLength(3);
    expect(children[2]!.sent[0]!.message).toEqual({ type: 'init', dataDir: '/data', secretStorage: 'os-encrypted' });
    expect(supervisor.connect()).toEqual({ name: 'renderer-end-1' });
    children[2]!.emit('exit', 139);
    expect(children).toHaveLength(4);
    expect(exits.at(-1)).toEqual({ code: 139, restarted: true });
  });

  it('closes at once when the host already gave up', async () => {
    const { supervisor, children } = setup();
    children[0]!.emit('exit', 1);
    children[1]!.emit('exit', 1);
    await expect(supervisor.close()).resolves.toBeUndefined();
  });
});
