// `node --import tsx --import ./scripts/register-sql.mjs file.ts` runs TypeScript that imports migrations.
import { register } from 'node:module';

register('./sql-hooks.mjs', import.meta.url);
