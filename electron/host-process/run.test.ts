// The utility-process side with fakes shaped like Electron's parentPort and MessagePortMain.
import { EventEmitter } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, type AnimaApi } from '../../shared/api.js';
import type { Host, HostOptions } from '../host/types.js';
import { answerCipherRequest, isMessage, type FromHost, type SafeStorageLike, type ToHost } from './parent-channel.js';
import { createPortClient, wireFromEmitterPort, type EmitterPortLike } from './port-protocol.js';
import { runHostProcess, type ParentPortLike } from './run.js';

/** Two MessagePortMain look-alikes wired to each other, delivering asynchronously like the real ones. */
class FakeMainPort extends EventEmitter {
  other!: FakeMainPort;
  closed = false;
  postMessage(message: unknown) {
    const target = this.other;
    const data = structuredClone(message);
    setImmediate(() => target.emit('message', { data, ports: [] }));
  }
  start() {}
  close() {
    if (this.closed) return;
    this.closed = true;
    setImmediate(() => this.other.emit('close'));
  }
}
function fakeChannel() {
  const port1 = new FakeMainPort();
  const port2 = new FakeMainPort();
  port1.other = port2;
  port2.other = port1;
  return { port1, port2 };
}

class FakeParentPort extends EventEmitter implements ParentPortLike {
  sent: FromHost[] = [];
  postMessage(message: unknown) {
    if (isMessage<FromHost>(message)) {
      this.sent.push(message);
      this.emit('to-main', message);
    }
  }
  deliver(data: ToHost, ports: unknown[] = []) {
    this.emit('message', { data, ports });
  }
}

/** Reversible and visibly not plain text, standing in for the OS keychain. */
const fakeSafeStorage: SafeStorageLike = {
  encryptString: (s) => Buffer.from(Buffer.from(`enc:${s}`).map((b) => b ^ 0x5a)),
  decryptString: (b) => {
    const s = Buffer.from(b.map((x) => x ^ 0x5a)).toString();
    if (!s.startsWith('enc:')) throw new Error('Error while decrypting the ciphertext provided to safeStorage.decryptString.');
    return s.slice(4);
  },
};

function fakeHost(options: HostOptions, closed: () => void): Host {
  return {
    api: {} as AnimaApi,
    dataDir: options.dataDir,
    async call(method, input) {
      const secrets = options.secrets!;
      if (method === 'secret.set') {
        const { name, value } = input as { name: string; value: string };
        await secrets.set(name, value);
        return { ok: true };
      }
      if (method === 'secret.get') return (await secrets.get((input as { name: string }).name)) ?? null;
      throw new ApiError('unknown_method', method);
    },
    on: () => () => {},
    async close() {
      closed();
    },
  };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'anima-host-process-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function start(createHost: (o: HostOptions) => Promise<Host>) {
  const parent = new FakeParentPort();
  const exit = vi.fn();
  const log = vi.fn();
  // Play main's part in the safeStorage round trip.
  parent.on('to-main', (m: FromHost) => {
    if (m.type === 'cipher') parent.deliver(answerCipherRequest(fakeSafeStorage, m));
  });
  runHostProcess({ parentPort: parent, createHost, log, exit });
  return { parent, exit, log };
}

function connectRenderer(parent: FakeParentPort) {
  const { port1, port2 } = fakeChannel();
  parent.deliver({ type: 'connect' }, [port1]);
  const client = createPortClient();
  client.attach(wireFromEmitterPort(port2 as unknown as EmitterPortLike));
  return client;
}

describe('runHostProcess', () => {
  it('serves a window that connected before init, with secrets encrypted through main', async () => {
    let options: HostOptions | undefined;
    const { parent } = start(async (o) => {
      options = o;
      return fakeHost(o, () => {});
    });
    const client = connectRenderer(parent);
    const pending = client.invoke('secret.set', { name: 'provider:abc', value: 'sk-live-123' });
    parent.deliver({ type: 'init', dataDir: dir, secretStorage: 'os-encrypted' });

    await expect(pending).resolves.toEqual({ ok: true, value: { ok: true } });
    expect(options).toMatchObject({ dataDir: dir, mode: 'electron' });
    expect(options?.secrets?.kind).toBe('os-encrypted');
    expect(parent.sent).toContainEqual({ type: 'ready' });

    const onDisk = await readFile(path.join(dir, 'secrets.json'), 'utf8');
    expect(onDisk).not.toContain('sk-live-123');
    await expect(client.invoke('secret.get', { name: 'provider:abc' })).resolves.toEqual({ ok: true, value: 'sk-live-123' });
  });

  it('leaves the owner-only-file default to the host when the keychain is unavailable, and says so', async () => {
    let options: HostOptions | undefined;
    const { parent, log } = start(async (o) => {
      options = o;
      return fakeHost(o, () => {});
    });
    parent.deliver({ type: 'init', dataDir: dir, secretStorage: 'owner-only-file' });
    await vi.waitFor(() => expect(parent.sent).toContainEqual({ type: 'ready' }));
    expect(options?.secrets).toBeUndefined();
    expect(log).toHaveBeenCalledWith('warn', expect.stringContaining('keychain is not available'));
  });

  it('reports a failed start to main and to every request', async () => {
    const { parent } = start(async () => {
      throw new ApiError('data_dir_locked', 'Another Anima is using this data folder.');
    });
    parent.deliver({ type: 'init', dataDir: dir, secretStorage: 'owner-only-file' });
    const client = connectRenderer(parent);
    await expect(client.invoke('app.info', {})).resolves.toEqual({
      ok: false,
      error: { code: 'data_dir_locked', message: 'Another Anima is using this data folder.' },
    });
    expect(parent.sent).toContainEqual({ type: 'failed', message: 'Another Anima is using this data folder.' });
  });

  it('closes the host when main asks, then tells main and exits', async () => {
    const closed = vi.fn();
    const { parent, exit } = start(async (o) => fakeHost(o, closed));
    parent.deliver({ type: 'init', dataDir: dir, secretStorage: 'owner-only-file' });
    parent.deliver({ type: 'close' });
    parent.deliver({ type: 'close' });
    await vi.waitFor(() => expect(exit).toHaveBeenCalledWith(0));
    expect(closed).toHaveBeenCalledTimes(1);
    expect(parent.sent.filter((m) => m.type === 'closed')).toHaveLength(1);
  });

  it('closes at once when the host was never started', async () => {
    const createHost = vi.fn();
    const { parent, exit } = start(createHost);
    parent.deliver({ type: 'close' });
    await vi.waitFor(() => expect(exit).toHaveBeenCalledWith(0));
    expect(createHost).not.toHaveBeenCalled();
  });

  it('ignores messages that are not ours', () => {
    const { parent } = start(vi.fn());
    expect(() => parent.emit('message', { data: 'hello', ports: [] })).not.toThrow();
    expect(() => parent.emit('message', { data: { type: 'connect' }, ports: [] })).not.toThrow();
  });
});
