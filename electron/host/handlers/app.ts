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
});
