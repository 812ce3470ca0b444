import type { DomainHandlers, HostServices } from './types.js';

export const attachmentsHandlers = (s: HostServices): DomainHandlers<'attachments'> => ({
  'attachments.upload': (input) => s.attachments.upload(input),
  'attachments.get': (input) => s.attachments.get(input.id),
});
