import type { ProviderConfig } from '../../../shared/api.js';
import { providerAbilities } from '../../providers/abilities.js';
import type { DomainHandlers, HostServices } from './types.js';

/** A connection with what its model can do for Anima. */
const withAbilities = async (s: HostServices, p: ProviderConfig): Promise<ProviderConfig> => ({
  ...p,
  abilities: providerAbilities(p, (await s.providers.schemaRefusal(p.id)) !== null),
});

export const providersHandlers = (s: HostServices): DomainHandlers<'providers'> => ({
  'providers.list': async () => Promise.all((await s.providers.list()).map((p) => withAbilities(s, p))),
  'providers.save': async (input) => {
    const saved = await s.providers.save(input);
    // The first connection a person makes is the one they mean to chat with.
    if (!(await s.settings.get()).chatProviderId) await s.settings.update({ chatProviderId: saved.id });
    return withAbilities(s, saved);
  },
  'providers.delete': async ({ id }) => {
    await s.providers.delete(id);
    const settings = await s.settings.get();
    const patch: { chatProviderId?: null; backgroundProviderId?: null } = {};
    if (settings.chatProviderId === id) patch.chatProviderId = null;
    if (settings.backgroundProviderId === id) patch.backgroundProviderId = null;
    if (Object.keys(patch).length) await s.settings.update(patch);
    return { ok: true as const };
  },
  'providers.test': (input) => s.providers.test(input),
  'providers.detect': async () => (s.detectLocalServers ? s.providers.detect() : []),
});
