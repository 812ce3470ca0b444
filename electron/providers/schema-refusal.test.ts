// A connection remembers that its server refused a JSON Schema for background answers — for the
// address and model it was refused at — on real PGlite.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../db/open.js';
import { OwnerOnlyFileSecretStore } from '../settings/secrets.js';
import { dbTemplate, tempDataDir } from '../testing/host.js';
import { modelsDir, Providers } from './providers.js';

let dir: string;
let db: Database;
let providers: Providers;

beforeAll(async () => {
  dir = tempDataDir('anima-schema-refusal-');
  db = await openDatabase(dir, { template: dbTemplate() });
  providers = new Providers(db, new OwnerOnlyFileSecretStore(dir), { modelsDir: modelsDir(dir) });
});
afterAll(async () => {
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a refused schema', () => {
  it("is remembered with the server's words, and forgotten when the connection points at another server or model", async () => {
    const input = { kind: 'openai-compatible' as const, name: 'Local', baseUrl: 'http://127.0.0.1:1234/v1', model: 'small-model' };
    const saved = await providers.save(input);
    expect(await providers.schemaRefusal(saved.id)).toBeNull();

    const said = 'The model server at 127.0.0.1:1234 refused the request (HTTP 400). It said: "\'response_format.json_schema.schema\' must be an object"';
    await providers.rememberSchemaRefusal(saved.id, said);
    expect(await providers.schemaRefusal(saved.id)).toBe(said);
    // Renaming it or changing its context changes nothing about the server.
    await providers.save({ ...input, id: saved.id, name: 'Renamed', contextTokens: 4096 });
    expect(await providers.schemaRefusal(saved.id)).toBe(said);

    // Another model on the same server is asked with a schema again; so is the same model elsewhere.
    await providers.save({ ...input, id: saved.id, model: 'bigger-model' });
    expect(await providers.schemaRefusal(saved.id)).toBeNull();
    await providers.rememberSchemaRefusal(saved.id, said);
    await providers.save({ ...input, id: saved.id, model: 'bigger-model', baseUrl: 'http://127.0.0.1:8080/v1' });
    expect(await providers.schemaRefusal(saved.id)).toBeNull();
    // A connection that does not exist has no refusal.
    expect(await providers.schemaRefusal('no-such-id')).toBeNull();
  });
});
