// The utility-process side with the real host (PGlite from the test template) behind the port:
// what the desktop app runs, minus Electron itself.
import { EventEmitter } from 'node:events';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { afterEach, expect, it, vi } from 'vitest';
import { startTestHost, tempDataDir } from '../testing/host.js';
import { answerCipherRequest, type FromHost } from './parent-channel.js';
import { createPortClient, wireFromDomPort, type DomPortLike, type EmitterPortLike } from './port-protocol.js';
import { runHostProcess } from './run.js';
import { PATIENCE_MS } from '../testing/patience.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A worker_threads port dressed as Electron's MessagePortMain (message events carry `{ data }`). */
function asMainPort(port: MessageChannel['port1']): EmitterPortLike {
  const wrapped = new Map<unknown, (data: unknown) => void>();
  return {
    postMessage: (m) => port.postMessage(m),
    on(event: 'message' | 'close', listener: (e?: any) => void) {
      if (event === 'message') {
        const w = (data: unknown) => listener({ data });
        wrapped.set(listener, w);
        port.on('message', w);
      } else port.on('close', listener);
      return this;
    },
    off(event: 'message' | 'close', listener: (e?: any) => void) {
      port.off(event, (wrapped.get(listener) ?? listener) as never);
      return this;
    },
    start: () => port.start(),
    close: () => port.close(),
  } as EmitterPortLike;
}

it('serves the real host over a port, with API keys encrypted by main', async () => {
  const dataDir = tempDataDir('anima-host-process-');
  dirs.push(dataDir);
  const safeStorage = {
    encryptString: (s: string) => Buffer.from(`E:${s}`).reverse(),
    decryptString: (b: Buffer) => Buffer.from(b).reverse().toString().slice(2),
  };
  const parent = Object.assign(new EventEmitter(), {
    sent: [] as FromHost[],
    postMessage(message: FromHost) {
      this.sent.push(message);
      if (message.type === 'cipher') {
        const reply = answerCipherRequest(safeStorage, message);
        setImmediate(() => parent.emit('message', { data: reply, ports: [] }));
      }
    },
  });
  const exit = vi.fn();
  runHostProcess({ parentPort: parent, createHost: (o) => startTestHost(o), log: () => {}, exit });

  const { port1, port2 } = new MessageChannel();
  parent.emit('message', { data: { type: 'connect' }, ports: [asMainPort(port1)] });
  parent.emit('message', { data: { type: 'init', dataDir, secretStorage: 'os-encrypted' }, ports: [] });
  const client = createPortClient();
  client.attach(wireFromDomPort(port2 as unknown as DomPortLike));

  await expect(client.invoke('app.info', {})).resolves.toMatchObject({
    ok: true,
    value: { mode: 'electron', dataDir, secretStorage: 'os-encrypted' },
  });
  await expect(client.invoke('settings.update', { sleepTime: '25:00' })).resolves.toMatchObject({
    ok: false,
    error: { code: 'invalid_input', field: 'sleepTime' },
  });

  const saved = await client.invoke('providers.save', {
    kind: 'openai-compatible',
    name: 'Test',
    baseUrl: 'http://127.0.0.1:9/v1',
    model: 'm',
    apiKey: 'sk-very-secret',
  });
  expect(saved).toMatchObject({ ok: true, value: { hasApiKey: true } });
  const onDisk = await readFile(path.join(dataDir, 'secrets.json'), 'utf8');
  expect(onDisk).not.toContain('sk-very-secret');
  expect(parent.sent.some((m) => m.type === 'cipher' && m.op === 'encrypt')).toBe(true);

  parent.emit('message', { data: { type: 'close' }, ports: [] });
  await vi.waitFor(() => expect(exit).toHaveBeenCalledWith(0), { timeout: PATIENCE_MS });
  expect(parent.sent.map((m) => m.type)).toContain('closed');
  port2.close();
});
