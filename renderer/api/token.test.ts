import { describe, expect, it } from 'vitest';
import { DEVICE_TOKEN_KEY, hasDeviceToken, keepDeviceToken, pairingFromHash, takeToken } from './token.js';

function storage(entries: Record<string, string> = {}) {
  const store = new Map(Object.entries(entries));
  return {
    store,
    getItem: (k: string) => store.get(k) ?? null,
    setItem: (k: string, v: string) => void store.set(k, v),
    removeItem: (k: string) => void store.delete(k),
  };
}

describe('a paired device’s token', () => {
  it('is used when the tab has no link token, and the link token still wins on this machine', () => {
    const device = storage();
    keepDeviceToken(device, 'device-token');
    expect(hasDeviceToken(device)).toBe(true);
    expect(device.store.get(DEVICE_TOKEN_KEY)).toBe('device-token');
    const env = { href: 'https://192.168.1.20:4001/', storage: storage(), replaceUrl: () => {}, deviceStorage: device };
    expect(takeToken(env)).toBe('device-token');
    expect(takeToken({ ...env, storage: storage({ 'anima.token': 'tab-token' }) })).toBe('tab-token');
    expect(takeToken({ ...env, storage: storage(), href: 'http://127.0.0.1:4000/?token=link-token' })).toBe('link-token');
    expect(takeToken({ ...env, deviceStorage: storage() })).toBeNull();
  });
});

describe('pairingFromHash', () => {
  const fp = 'ab'.repeat(32);
  it('reads the secret and the fingerprint, colon hex upper-case', () => {
    expect(pairingFromHash(`#pair=s3cr3t-_x&fp=${fp}`)).toEqual({ secret: 's3cr3t-_x', fingerprint: Array(32).fill('AB').join(':') });
  });
  it('is null without a secret or with a fingerprint that is not 32 bytes of hex', () => {
    expect(pairingFromHash('')).toBeNull();
    expect(pairingFromHash(`#fp=${fp}`)).toBeNull();
    expect(pairingFromHash('#pair=x&fp=abcd')).toBeNull();
    expect(pairingFromHash(`#pair=x&fp=${'zz'.repeat(32)}`)).toBeNull();
  });
});
