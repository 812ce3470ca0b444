// Migrations in order. Add a file NNN_name.sql and list it here; applied versions are never edited.
import initial from './001_initial.sql';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrations: Migration[] = [{ version: 1, name: 'initial', sql: initial }];
