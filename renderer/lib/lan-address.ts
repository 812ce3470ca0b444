// Where a device on the network reaches the LAN listener, as Settings → Devices shows it: the address
// --listen named, or for 0.0.0.0 each IPv4 LAN address (and for :: each IPv6 one as well), with the
// port; an IPv6 address in brackets, as it stands in a URL.
import type { DevicesList } from '../../shared/api.js';

const IPV4 = /^\d+(\.\d+){3}$/;

export function listeningAt({ address, port, names }: NonNullable<DevicesList['listening']>): string {
  const at = (name: string) => `${name.includes(':') ? `[${name}]` : name}:${port}`;
  if (address !== '0.0.0.0' && address !== '::') return at(address);
  const lan = names.filter((n) => (IPV4.test(n) && !n.startsWith('127.')) || (address === '::' && n.includes(':') && n !== '::1'));
  return (lan.length ? lan : names).map(at).join(', ');
}
