import { describe, expect, it } from 'vitest';
import { listeningAt } from './lan-address.js';

const fp = 'AB:CD';

describe('listeningAt', () => {
  it('shows the address --listen named, an IPv6 one in brackets', () => {
    expect(listeningAt({ address: '192.168.1.20', port: 4001, names: ['192.168.1.20', 'localhost'], fingerprint: fp })).toBe('192.168.1.20:4001');
    expect(listeningAt({ address: '::1', port: 4001, names: ['::1', 'localhost'], fingerprint: fp })).toBe('[::1]:4001');
    expect(listeningAt({ address: 'fd00::20', port: 4001, names: ['fd00::20'], fingerprint: fp })).toBe('[fd00::20]:4001');
  });

  it('shows each LAN address for 0.0.0.0 (IPv4) and :: (both families), never a loopback one', () => {
    const names = ['127.0.0.1', '192.168.1.20', '::1', 'fd00::20', 'box.local', 'localhost'];
    expect(listeningAt({ address: '0.0.0.0', port: 4001, names, fingerprint: fp })).toBe('192.168.1.20:4001');
    expect(listeningAt({ address: '::', port: 4001, names, fingerprint: fp })).toBe('192.168.1.20:4001, [fd00::20]:4001');
    // No LAN address at all: the names there are.
    expect(listeningAt({ address: '::', port: 4001, names: ['::1', 'localhost'], fingerprint: fp })).toBe('[::1]:4001, localhost:4001');
  });
});
