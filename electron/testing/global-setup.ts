// Builds the migrated database template once per test run (initdb costs seconds; loading a dump
// is several times faster), cached by a hash of the migrations so a schema change rebuilds it.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { dumpTemplate, openDatabase } from '../db/open.js';
import { migrations } from '../db/migrations/index.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dbTemplatePath: string;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const hash = createHash('sha256')
    .update(migrations.map((m) => `${m.version}:${m.sql}`).join('\n'))
    .digest('hex')
    .slice(0, 16);
  const cacheDir = path.resolve('.cache', 'test-template');
  const file = path.join(cacheDir, `anima-${hash}.tar.gz`);
  if (!fs.existsSync(file)) {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-template-'));
    const db = await openDatabase(scratch);
    const blob = await dumpTemplate(db);
    await db.close();
    fs.mkdirSync(cacheDir, { recursive: true });
    fs.writeFileSync(`${file}.tmp`, Buffer.from(await blob.arrayBuffer()));
    fs.renameSync(`${file}.tmp`, file);
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  project.provide('dbTemplatePath', file);
}
