import { describe, expect, it } from 'vitest';
import { deviceNameFrom, fingerprintRows } from './device-name.js';

describe('deviceNameFrom', () => {
  it('names common devices and browsers', () => {
    expect(
      deviceNameFrom('Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1'),
    ).toBe('iPhone (Safari)');
    expect(deviceNameFrom('Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36')).toBe(
      'Android phone (Chrome)',
    );
    expect(deviceNameFrom('Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:125.0) Gecko/20100101 Firefox/125.0')).toBe('Windows PC (Firefox)');
    expect(deviceNameFrom('')).toBe('Device');
  });
});

describe('fingerprintRows', () => {
  it('lays 32 bytes out in four rows of eight', () => {
    const fp = Array.from({ length: 32 }, (_, i) => i.toString(16).padStart(2, '0').toUpperCase()).join(':');
    expect(fingerprintRows(fp).split('\n')).toEqual([
      '00:01:02:03:04:05:06:07',
      '08:09:0A:0B:0C:0D:0E:0F',
      '10:11:12:13:14:15:16:17',
      '18:19:1A:1B:1C:1D:1E:1F',
    ]);
  });
});
