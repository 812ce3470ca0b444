import { ApiError } from '../../../shared/api.js';
import { sleepDay } from '../../../shared/sleep-day.js';
import type { DomainHandlers, HostServices } from './types.js';

export const appHandlers = (s: HostServices): DomainHandlers<'app'> => ({
  'app.info': async () => {
    const settings = await s.settings.get();
    return {
      version: s.version,
      mode: s.mode,
      dataDir: s.dataDir,
      secretStorage: s.secrets.kind,
      sleepDay: sleepDay(s.now(), settings.sleepTime, settings.timeZone),
      notices: [...s.notices],
    };
  },
  'app.eraseEverything': (input) => s.erase.erase(input.confirm),
  'app.resetBrowserLink': async () => {
    if (!s.browserLink) throw new ApiError('conflict', 'Only Anima in a browser has a link to reset.');
    return { token: await s.browserLink.reset() };
  },
});
