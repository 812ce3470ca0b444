import type { DomainHandlers, HostServices } from './types.js';

export const importsHandlers = (s: HostServices): DomainHandlers<'imports'> => ({
  'imports.upload': (input) => s.imports.upload(input),
  'imports.preview': (input) => s.imports.preview(input),
  'imports.apply': (input) => s.imports.apply(input),
  'imports.cancel': () => s.imports.cancel(),
  'imports.status': () => s.imports.status(),
  'imports.discard': (input) => s.imports.discard(input),
  'imports.applyCard': (input) => s.imports.applyCard(input),
});
