// Settings → Data → Storage: where the data is kept — this folder's database or a PostgreSQL server —
// the Test of a server, and the choice, which applies on the next start (db/choice.ts).
import { ApiError, type StorageStatus } from '../../../shared/api.js';
import { probeDatabase, readDatabaseChoice, withStoredPassword, writeDatabaseChoice } from '../../db/choice.js';
import { databaseDir } from '../../db/open.js';
import { engineOf } from '../../db/database.js';
import { PostgresDatabase } from '../../db/postgres.js';
import type { DomainHandlers, HostServices } from './types.js';

async function status(s: HostServices): Promise<StorageStatus> {
  const engine = engineOf(s.db);
  const where = s.db instanceof PostgresDatabase ? s.db.where : databaseDir(s.dataDir);
  const chosen = await readDatabaseChoice(s.dataDir, s.secrets);
  // What runs now, compared with what the next start opens (a URL's password never counts).
  const running = engine === 'postgres' ? where.replace(':***@', '@') : null;
  const next = chosen ? chosen.url : null;
  return { engine, where, chosen, restartNeeded: !s.databaseFixed && running !== next, fixedByCommandLine: s.databaseFixed };
}

export const storageHandlers = (s: HostServices): DomainHandlers<'storage'> => ({
  'storage.status': () => status(s),
  'storage.test': async (input) => probeDatabase(await withStoredPassword(s.dataDir, s.secrets, input.url)),
  'storage.choose': async (input) => {
    if (input.url !== null) {
      // Checked before it is kept: a server that cannot be opened would stop the next start.
      const probe = await probeDatabase(await withStoredPassword(s.dataDir, s.secrets, input.url));
      if (!probe.supported) throw new ApiError('invalid_input', `Anima needs PostgreSQL 15 or newer; ${probe.where} is ${probe.version}.`, 'url');
      if (probe.trgm === 'missing') {
        throw new ApiError(
          'invalid_input',
          `The server at ${probe.where} has no pg_trgm extension, which Anima needs: install PostgreSQL's contrib extensions there.`,
          'url',
        );
      }
      if (probe.contents === 'other') {
        throw new ApiError(
          'invalid_input',
          `The database at ${probe.where} holds tables that are not Anima's. Choose an empty database (createdb) or one Anima uses.`,
          'url',
        );
      }
    }
    // A URL without a password keeps the stored one when it is the same server.
    await writeDatabaseChoice(s.dataDir, s.secrets, input.url === null ? null : await withStoredPassword(s.dataDir, s.secrets, input.url));
    s.log('info', input.url === null ? 'storage: this data folder from the next start' : 'storage: a PostgreSQL server from the next start');
    return status(s);
  },
});
