// What global-setup.ts hands every test through vitest's inject(). A declaration file, so both
// TypeScript projects that check tests see it: the root one and electron/main's (which includes
// every *.d.ts but not global-setup.ts).
import 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    dbTemplatePath: string;
    /** The run's PostgreSQL cluster (its `postgres` database, as the superuser), or '' with postgresSkip saying why. */
    postgresUrl: string;
    postgresSkip: string;
  }
}
