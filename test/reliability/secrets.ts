// Part 4: the secret corpus (electron/memory/testing/secret-corpus.ts) through every write path of the
// API that must never keep a credential: memories.create, memories.update, self.update,
// graph.rename and graph.addAlias. A credential is kept out when the call is refused (4xx) or what
// is stored is not the text as sent (redacted); a harmless control must be stored as written.
import { startFakeLlm } from '../../e2e/fake-llm/server.js';
import { call, configure, must, newDataDir, spawnApp, type AppEndpoint, type Entry } from './harness.js';

interface Sample {
  form: string;
  text: string;
}

export interface SecretReport {
  /** false when the corpus module is missing: the part then only reports that (a TODO, not a pass). */
  corpusFound: boolean;
  credentials: number;
  controls: number;
  paths: string[];
  /** Credential × path attempts kept out (refused or redacted), of credentialAttempts. */
  credentialAttempts: number;
  keptOut: number;
  /** Credential × path attempts stored as written: must be 0. */
  leaked: number;
  controlAttempts: number;
  controlsAccepted: number;
  /** Controls refused or altered: must be 0. */
  controlsRefused: number;
  serverErrors: number;
  leaks: string[];
  falsePositives: string[];
  elapsedS: number;
}

const CORPUS = '../../electron/memory/testing/secret-corpus.js';

async function loadCorpus(): Promise<{ credentials: Sample[]; controls: Sample[] } | null> {
  try {
    const mod = (await import(/* @vite-ignore */ CORPUS)) as { CREDENTIALS?: Sample[]; CONTROLS?: Sample[] };
    if (!Array.isArray(mod.CREDENTIALS) || !Array.isArray(mod.CONTROLS)) return null;
    return { credentials: mod.CREDENTIALS, controls: mod.CONTROLS };
  } catch {
    return null;
  }
}

type Path = (app: AppEndpoint, text: string, ctx: Ctx) => Promise<{ status: number; stored?: string; error?: string }>;

/** Names are normalised where they are stored (NFKC, one space): that is not a refusal. */
const norm = (s: string) => s.normalize('NFKC').replace(/\s+/g, ' ').trim();
const storedAsWritten = (stored: string | undefined, text: string) => stored !== undefined && norm(stored) === norm(text);
const errorOf = (body: any) => (typeof body?.error?.message === 'string' ? body.error.message : undefined);
interface Ctx {
  memoryId: number;
  entityId: number;
  aliasEntityId: number;
}

const PATHS: Record<string, Path> = {
  'memories.create': async (app, text) => {
    const r = await call(app, 'memories.create', { type: 'world', content: text });
    return { status: r.status, stored: r.status === 200 ? r.body.memory.content : undefined };
  },
  'memories.update': async (app, text, ctx) => {
    const r = await call(app, 'memories.update', { id: ctx.memoryId, content: text });
    return { status: r.status, stored: r.status === 200 ? r.body.memory.content : undefined };
  },
  'self.update': async (app, text) => {
    const r = await call(app, 'self.update', { key: 'narrative', content: text });
    return { status: r.status, stored: r.status === 200 ? r.body.content : undefined };
  },
  'graph.rename': async (app, text, ctx) => {
    const r = await call(app, 'graph.rename', { id: ctx.entityId, name: text });
    if (r.status !== 200) return { status: r.status, error: errorOf(r.body) };
    const e = await call(app, 'graph.entity', { id: ctx.entityId });
    // Undone after the check, so the old name kept as an alias does not block the next path's same text.
    await must(app, 'graph.undo', { changeId: r.body.changeId });
    return { status: r.status, stored: e.body?.entity?.name ?? e.body?.name };
  },
  'graph.addAlias': async (app, text, ctx) => {
    const r = await call(app, 'graph.addAlias', { id: ctx.aliasEntityId, alias: text });
    if (r.status !== 200) return { status: r.status, error: errorOf(r.body) };
    const e = await call(app, 'graph.entity', { id: ctx.aliasEntityId });
    const entity = e.body?.entity ?? e.body;
    const aliases: string[] = entity?.aliases ?? [];
    await must(app, 'graph.undo', { changeId: r.body.changeId });
    return { status: r.status, stored: aliases.find((a) => norm(a) === norm(text)) ?? `(not among ${aliases.length} aliases)` };
  },
};

export async function runSecretCorpus(opts: { entry: Entry; log?: (line: string) => void }): Promise<SecretReport> {
  const log = opts.log ?? (() => {});
  const started = Date.now();
  const corpus = await loadCorpus();
  const report: SecretReport = {
    corpusFound: corpus !== null,
    credentials: corpus?.credentials.length ?? 0,
    controls: corpus?.controls.length ?? 0,
    paths: Object.keys(PATHS),
    credentialAttempts: 0,
    keptOut: 0,
    leaked: 0,
    controlAttempts: 0,
    controlsAccepted: 0,
    controlsRefused: 0,
    serverErrors: 0,
    leaks: [],
    falsePositives: [],
    elapsedS: 0,
  };
  if (!corpus) {
    // TODO(secret corpus): electron/memory/testing/secret-corpus.ts (CREDENTIALS, CONTROLS) is not there yet.
    log('  secrets: the corpus module is missing; nothing run');
    return report;
  }
  const fake = await startFakeLlm({ defaultChunkDelayMs: 0 });
  const proc = spawnApp(newDataDir('anima-rel-secrets-'), opts.entry);
  try {
    const app = await proc.ready;
    await configure(app, fake.baseUrl);
    const memoryId = (await must(app, 'memories.create', { type: 'world', content: 'The garden has three apple trees.' })).memory.id as number;
    // One entity is renamed, another gets the aliases (a rename keeps the old name as an alias).
    await must(app, 'graph.import', {
      entities: [
        { name: 'Placeholder Person', kind: 'person' },
        { name: 'Alias Holder', kind: 'person' },
      ],
      edges: [],
    });
    const entity = async (name: string): Promise<number> => {
      const found = (await must(app, 'graph.search', { query: name })) as { id: number; name: string }[];
      const id = found.find((e) => e.name === name)?.id;
      if (typeof id !== 'number') throw new Error(`no entity ${name}: ${JSON.stringify(found).slice(0, 200)}`);
      return id;
    };
    const ctx: Ctx = { memoryId, entityId: await entity('Placeholder Person'), aliasEntityId: await entity('Alias Holder') };
    for (const [name, run] of Object.entries(PATHS)) {
      for (const sample of corpus.credentials) {
        const r = await run(app, sample.text, ctx);
        report.credentialAttempts++;
        if (r.status >= 500 || r.status === 0) report.serverErrors++;
        if (r.status === 200 && storedAsWritten(r.stored, sample.text)) {
          report.leaked++;
          if (report.leaks.length < 200) report.leaks.push(`${name}: ${sample.form}`);
        } else report.keptOut++;
      }
      for (const sample of corpus.controls) {
        const r = await run(app, sample.text, ctx);
        report.controlAttempts++;
        if (r.status >= 500 || r.status === 0) report.serverErrors++;
        if (r.status === 200 && storedAsWritten(r.stored, sample.text)) report.controlsAccepted++;
        else {
          report.controlsRefused++;
          const why = r.stored !== undefined ? `, stored ${JSON.stringify(r.stored).slice(0, 60)}` : r.error ? `: ${r.error.slice(0, 120)}` : '';
          report.falsePositives.push(`${name}: ${sample.form} (${r.status}${why})`);
        }
      }
      log(`  secrets / ${name}: ${report.leaked} leaked so far, ${report.controlsRefused} controls refused so far`);
    }
  } finally {
    await proc.stop();
    await fake.close();
    report.elapsedS = Math.round((Date.now() - started) / 1000);
  }
  return report;
}
