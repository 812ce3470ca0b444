// Secrets never become a self block, an entity name or an alias: every credential of the corpus is
// refused through the host API on a real PGlite, naming the field and changing nothing, and every
// harmless control is saved.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Host } from '../host/types.js';
import { startTestHost } from '../testing/host.js';
import { CONTROLS, CREDENTIALS } from './testing/secret-corpus.js';

let host: Host;

beforeAll(async () => {
  host = await startTestHost();
});
afterAll(() => host.close());

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e as { code?: string; field?: string; message: string },
  );

describe('self blocks', () => {
  it('refuses every credential of the corpus, naming the field, and changes nothing', async () => {
    const before = await host.api['self.list']({});
    for (const s of CREDENTIALS) {
      const err = await refusal(host.api['self.update']({ key: 'relationship', content: `We met in the spring.\n${s.text}` }));
      expect({ form: s.form, code: err?.code, field: err?.field }).toEqual({ form: s.form, code: 'invalid_input', field: 'content' });
      expect(err!.message).toContain('cannot hold credentials');
    }
    expect(await host.api['self.list']({})).toEqual(before);
  });

  it('saves every harmless control as written', async () => {
    for (const s of CONTROLS) {
      const saved = await host.api['self.update']({ key: 'narrative', content: s.text });
      expect(saved.content).toBe(s.text);
    }
    await host.api['self.reset']({ key: 'narrative' });
  });
});

describe('entity names and aliases', () => {
  // The API takes names of up to 500 characters (a name holds 120; the credential is named first).
  const fitting = CREDENTIALS.filter((s) => s.text.length <= 500);

  it('refuses a credential as a new name or an alias, and the entity keeps its names and history', async () => {
    expect(fitting.length).toBe(CREDENTIALS.length);
    await host.api['graph.import']({ entities: [{ name: 'Ana', kind: 'person', aliases: ['Ana Sousa'] }], edges: [] });
    const ana = (await host.api['graph.search']({ query: 'Ana' }))[0]!;
    const before = await host.api['graph.entity']({ id: ana.id });
    for (const s of fitting) {
      const renamed = await refusal(host.api['graph.rename']({ id: ana.id, name: s.text }));
      expect({ form: s.form, code: renamed?.code, field: renamed?.field }).toEqual({ form: s.form, code: 'invalid_input', field: 'name' });
      expect(renamed!.message).toContain('credential');
      const aliased = await refusal(host.api['graph.addAlias']({ id: ana.id, alias: s.text }));
      expect({ form: s.form, code: aliased?.code, field: aliased?.field }).toEqual({ form: s.form, code: 'invalid_input', field: 'alias' });
    }
    const after = await host.api['graph.entity']({ id: ana.id });
    expect(after.entity).toEqual(before.entity);
    expect(after.history).toEqual(before.history);
  });

  it('refuses an import naming a credential, and creates nothing', async () => {
    const total = (await host.api['graph.view']({})).totalEntities;
    const key = fitting.find((s) => s.form === 'GitHub classic token')!.text;
    const asName = await refusal(
      host.api['graph.import']({
        entities: [
          { name: 'Porto', kind: 'place' },
          { name: key, kind: 'thing' },
        ],
        edges: [],
      }),
    );
    expect(asName).toMatchObject({ code: 'invalid_input', field: 'entities.1.name' });
    const asAlias = await refusal(host.api['graph.import']({ entities: [{ name: 'Porto', kind: 'place', aliases: ['密码是 Tiger2024!'] }], edges: [] }));
    expect(asAlias).toMatchObject({ code: 'invalid_input', field: 'entities.0.aliases.0' });
    expect((await host.api['graph.view']({})).totalEntities).toBe(total);
  });

  it('accepts the harmless controls as names', async () => {
    const mara = (await host.api['graph.import']({ entities: [{ name: 'Mara', kind: 'person' }], edges: [] }),
    await host.api['graph.search']({ query: 'Mara' }))[0]!;
    const names = CONTROLS.map((s) => s.text).filter((t) => t.length <= 120);
    expect(names.length).toBeGreaterThanOrEqual(20);
    for (const name of names) {
      const renamed = await host.api['graph.rename']({ id: mara.id, name });
      expect(renamed.entity.name).toBe(name.normalize('NFKC').replace(/\s+/g, ' ').trim());
    }
  });
});
