import type { DomainHandlers, HostServices } from './types.js';

/** Settings → Data → Backups: the copies, "Back up now", the person's folder and schedule, restore. */
export const backupsHandlers = (s: HostServices): DomainHandlers<'backups'> => ({
  'backups.list': () => s.backups.state(),
  'backups.makeNow': (input) => s.backups.makeNow(input.where),
  'backups.restore': (input) => s.backups.restore(input.id),
  'backups.setFolder': (input) => s.backups.setFolder(input.folder),
  'backups.setSchedule': (input) => s.backups.setSchedule(input),
});
