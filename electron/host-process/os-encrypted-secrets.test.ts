import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { OsEncryptedSecretStore, type SecretCipher } from './os-encrypted-secrets.js';
import { CIPHER_TIMEOUT_MS, answerCipherRequest, createCipherClient, type FromHost } from './parent-channel.js';

const cipher: SecretCipher = {
  encrypt: async (s) => Buffer.from(s).reverse().toString('base64'),
  decrypt: async (b) => {
    if (b === 'garbage') throw new Error('bad ciphertext');
    return Buffer.from(b, 'base64').reverse().toString();
  },
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'anima-secrets-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('OsEncryptedSecretStore', () => {
  it('stores only ciphertext, owner-only, and reads it back', async () => {
    const store = new OsEncryptedSecretStore(dir, cipher);
    expect(store.kind).toBe('os-encrypted');
    expect(await store.get('a')).toBeUndefined();
    await store.set('a', 'sk-secret-value');
    await store.set('b', 'other');
    const text = await readFile(path.join(dir, 'secrets.json'), 'utf8');
    expect(text).not.toContain('sk-secret-value');
    if (process.platform !== 'win32') expect((await stat(path.join(dir, 'secrets.json'))).mode & 0o777).toBe(0o600);
    expect(await new OsEncryptedSecretStore(dir, cipher).get('a')).toBe('sk-secret-value');
    await store.delete('a');
    await store.delete('missing');
    expect(await store.get('a')).toBeUndefined();
    expect(await store.get('b')).toBe('other');
  });

  it('loses no update when saves overlap', async () => {
    const store = new OsEncryptedSecretStore(dir, cipher);
    await Promise.all(Array.from({ length: 10 }, (_, i) => store.set(`k${i}`, `v${i}`)));
    for (let i = 0; i < 10; i++) expect(await store.get(`k${i}`)).toBe(`v${i}`);
  });

  it('treats an undecryptable entry as missing and logs it', async () => {
    await writeFile(path.join(dir, 'secrets.json'), JSON.stringify({ format: 'anima-secrets/os-encrypted', version: 1, secrets: { a: 'garbage' } }));
    const log = vi.fn();
    expect(await new OsEncryptedSecretStore(dir, cipher, log).get('a')).toBeUndefined();
    expect(log).toHaveBeenCalledWith('warn', expect.stringContaining('could not decrypt'));
  });

  it('encrypts keys left in plain text by the owner-only-file store, leaving no plain copy', async () => {
    await writeFile(path.join(dir, 'secrets.json'), JSON.stringify({ 'provider:a': 'sk-plain-1', 'provider:b': 'sk-plain-2' }));
    const log = vi.fn();
    const store = new OsEncryptedSecretStore(dir, cipher, log);
    expect(await store.get('provider:a')).toBe('sk-plain-1');
    const text = await readFile(path.join(dir, 'secrets.json'), 'utf8');
    expect(text).not.toContain('sk-plain');
    expect(await readdir(dir)).toEqual(['secrets.json']);
    expect(await store.get('provider:b')).toBe('sk-plain-2');
    expect(log).toHaveBeenCalledWith('info', expect.stringContaining('encrypted 2 API key(s)'));
  });

  it('moves a file in an unknown format aside instead of overwriting it', async () => {
    await writeFile(path.join(dir, 'secrets.json'), '{"plain": {"nested": "sk-from-elsewhere"}}');
    const log = vi.fn();
    const store = new OsEncryptedSecretStore(dir, cipher, log);
    await store.set('a', 'x');
    const files = await readdir(dir);
    const aside = files.find((f) => f.startsWith('secrets.json.unreadable-'));
    expect(aside).toBeDefined();
    expect(await readFile(path.join(dir, aside!), 'utf8')).toContain('sk-from-elsewhere');
    expect(await store.get('a')).toBe('x');
    expect(log).toHaveBeenCalledWith('warn', expect.stringContaining('not in the expected format'));
  });
});

describe('cipher round trip between host and main', () => {
  const safeStorage = {
    encryptString: (s: string) => Buffer.from(`E(${s})`),
    decryptString: (b: Buffer) => {
      const s = b.toString();
      if (!s.startsWith('E(')) throw new Error('decrypt failed');
      return s.slice(2, -1);
    },
  };

  it('encrypts and decrypts via messages, as base64 on the wire', async () => {
    const sent: FromHost[] = [];
    const { cipher: remote, receive } = createCipherClient((m) => {
      sent.push(m);
      if (m.type === 'cipher') queueMicrotask(() => receive(answerCipherRequest(safeStorage, m)));
    });
    const encrypted = await remote.encrypt('hello');
    expect(Buffer.from(encrypted, 'base64').toString()).toBe('E(hello)');
    expect(await remote.decrypt(encrypted)).toBe('hello');
    await expect(remote.decrypt(Buffer.from('nope').toString('base64'))).rejects.toThrow('decrypt failed');
    expect(sent.map((m) => m.type)).toEqual(['cipher', 'cipher', 'cipher']);
  });

  it('gives up when main never answers', async () => {
    vi.useFakeTimers();
    try {
      const { cipher: remote } = createCipherClient(() => {});
      const result = remote.encrypt('x');
      const assertion = expect(result).rejects.toThrow('did not answer');
      await vi.advanceTimersByTimeAsync(CIPHER_TIMEOUT_MS + 1);
      await assertion;
    } finally {
      vi.useRealTimers();
    }
  });
});
