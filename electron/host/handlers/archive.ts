// Export (Settings → Data, browser and desktop alike): into the data folder's exports/, one at a time.
// A host closing mid-export closes the database under it: the export stops and removes its partial file.
import { ArchiveExports } from '../../archive/exports.js';
import type { DomainHandlers, HostServices } from './types.js';

export const archiveHandlers = (s: HostServices): DomainHandlers<'archive'> => {
  const exports = new ArchiveExports({
    db: s.db,
    dataDir: s.dataDir,
    appVersion: s.version,
    now: s.now,
    log: s.log,
    emit: (status) => s.events.emit('archive.progress', status),
  });
  return {
    'archive.export': async () => exports.start(),
    'archive.cancel': async () => exports.cancel(),
    'archive.exportStatus': async () => exports.status(),
  };
};
