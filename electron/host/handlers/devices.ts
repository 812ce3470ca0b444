// Devices on the local network (Settings → Devices): the list, a pairing code, revoke, rename.
// Owner-only: the LAN listener refuses these to a paired device (OWNER_ONLY_METHODS).
import type { DomainHandlers, HostServices } from './types.js';

export const devicesHandlers = (s: HostServices): DomainHandlers<'devices'> => ({
  'devices.list': () => s.devices.list(),
  'devices.pairingStart': async () => s.devices.pairingStart(),
  'devices.revoke': (input) => s.devices.revoke(input.id),
  'devices.rename': (input) => s.devices.rename(input.id, input.name),
});
