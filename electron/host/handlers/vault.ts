// The vault folder both ways (Settings → Data → Vault folder, and `anima vault sync`).
import type { DomainHandlers, HostServices } from './types.js';

export const vaultHandlers = (s: HostServices): DomainHandlers<'vault'> => ({
  'vault.status': () => s.vault.status(),
  'vault.configure': (input) => s.vault.configure(input),
  'vault.sync': (input) => s.vault.sync(input),
});
