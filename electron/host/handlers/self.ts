import type { DomainHandlers, HostServices } from './types.js';

export const selfHandlers = (s: HostServices): DomainHandlers<'self'> => ({
  'self.list': () => s.selfLayer.list(),
  'self.update': ({ key, content }) => s.selfLayer.update(key, content),
  'self.reset': (input) => s.selfLayer.reset(input.key),
});
