// The same integration tests on the other engine: every host and database they open is a fresh
// database on a throwaway PostgreSQL cluster (electron/testing/postgres.ts, started by global-setup)
// instead of PGlite. `npm run test:postgres`; skipped, saying why, where the server binaries are absent.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';
import { NO_POSTGRES_REASON, postgresBin } from './electron/testing/postgres.js';

/** A representative set: the memory store, recall, the sleep cycle, data ownership (the trash, erase), chat. */
export const POSTGRES_TESTS = [
  'electron/db/postgres.pg.test.ts',
  'electron/memory/store.test.ts',
  'electron/memory/recall/recall.test.ts',
  'electron/sleep/nap.test.ts',
  'electron/sleep/cycle-light.test.ts',
  'electron/sleep/cycle-deep.test.ts',
  'electron/forgetting/trash.test.ts',
  'electron/agent/chat.test.ts',
  'electron/host/host.test.ts',
  'electron/archive/migrate-store.pg.test.ts',
  'electron/serve/lan.test.ts',
  'electron/serve/multi-client.test.ts',
  'electron/host/reconnect.pg.test.ts',
];

process.env.ANIMA_TEST_ENGINE = 'postgres';
const available = postgresBin() !== null;
if (!available) console.log(`test:postgres: skipped — ${NO_POSTGRES_REASON}.`);

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: available ? POSTGRES_TESTS : [],
    passWithNoTests: true,
    env: { ANIMA_TEST_ENGINE: 'postgres' },
  },
});
