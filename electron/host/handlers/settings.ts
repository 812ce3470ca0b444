import { ApiError } from '../../../shared/api.js';
import { isValidTimeZone } from '../../../shared/sleep-day.js';
import type { DomainHandlers, HostServices } from './types.js';

export const settingsHandlers = (s: HostServices): DomainHandlers<'settings'> => ({
  'settings.get': () => s.settings.get(),
  'settings.update': async (patch) => {
    if (patch.timeZone !== undefined && !isValidTimeZone(patch.timeZone)) {
      throw new ApiError('invalid_input', `“${patch.timeZone}” is not a time zone I know.`, 'timeZone');
    }
    for (const field of ['chatProviderId', 'backgroundProviderId'] as const) {
      const id = patch[field];
      if (id)
        await s.providers.get(id).catch(() => {
          throw new ApiError('invalid_input', 'That model connection does not exist.', field);
        });
    }
    if (patch.models?.embedding !== undefined) await s.localModels.checkEmbeddingChoice(patch.models.embedding, 'models.embedding');
    if (patch.models?.host !== undefined) patch.models.host = patch.models.host.replace(/\/+$/, '');
    const before = (await s.settings.get()).models.embedding;
    const next = await s.settings.update(patch);
    if (next.models.embedding !== before) void s.localModels.changed(next.models.embedding ?? before);
    return next;
  },
});
