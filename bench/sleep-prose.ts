// bench:sleep --mode prose-then-json: what structured answers are worth with a model that answers in
// prose unless it is held to a schema (the small local model issue 17 is about). The same loaded
// folder is copied twice; each copy sleeps through the same full cycles (as the cost run: until no
// light-sleep work is left) against a loopback model in this process that answers every sleep prompt
// in prose (the JSON's words in sentences) unless the request carries the answer's JSON Schema, and
// with the JSON when it does — or on the repair turn, which asks for the JSON alone:
//   structured    a connection asked with the schema (response_format json_schema), as the app does;
//   prompt only   the same connection remembered as refusing schemas, so asked by the prompt alone.
// Counted from the audit log (every attempt): unusable answers (rows the schema check refused) and
// repair calls (second attempts), each per night; also the calls, nights and memories written.
import fs from 'node:fs';
import path from 'node:path';
import { sleepResponder } from '../e2e/fake-llm/sleep-responder.js';
import { startFakeLlm } from '../e2e/fake-llm/server.js';
import { openDatabase } from '../electron/db/open.js';
import { createHost } from '../electron/host/index.js';
import { modelsDir, Providers } from '../electron/providers/providers.js';
import { OwnerOnlyFileSecretStore } from '../electron/settings/secrets.js';
import { SettingsStore } from '../electron/settings/settings.js';
import { REPAIR_REQUEST } from '../electron/sleep/audit.js';
import type { ApiEvents } from '../shared/api.js';
import { round } from './util.js';

const MAX_CYCLES = 12;
const CYCLE_TIMEOUT_MS = 30 * 60_000;

export interface ProseVariant {
  nights: number;
  calls: number;
  unusable: number;
  repair_calls: number;
  asked_with_schema: number;
  memories: number;
  failed_nights: number;
}

export interface ProseThenJsonResult {
  structured_unusable: number;
  prompt_only_unusable: number;
  structured_repair_calls: number;
  prompt_only_repair_calls: number;
  prose_then_json: { structured: ProseVariant; prompt_only: ProseVariant };
}

/** Runs both variants on copies of `loadedDir` (inside `scratch`); `fail` gives up with words. */
export async function measureProseThenJson(opts: {
  loadedDir: string;
  scratch: string;
  contextTokens?: number;
  fail: (message: string) => never;
}): Promise<ProseThenJsonResult> {
  const structured = await variant('structured', opts);
  const promptOnly = await variant('prompt-only', opts);
  const perNight = (n: number, v: ProseVariant) => (v.nights ? round(n / v.nights, 2) : 0);
  return {
    structured_unusable: perNight(structured.unusable, structured),
    prompt_only_unusable: perNight(promptOnly.unusable, promptOnly),
    structured_repair_calls: perNight(structured.repair_calls, structured),
    prompt_only_repair_calls: perNight(promptOnly.repair_calls, promptOnly),
    prose_then_json: { structured, prompt_only: promptOnly },
  };
}

async function variant(
  name: 'structured' | 'prompt-only',
  opts: { loadedDir: string; scratch: string; contextTokens?: number; fail: (message: string) => never },
): Promise<ProseVariant> {
  const dir = path.join(opts.scratch, `prose-${name}`);
  fs.cpSync(opts.loadedDir, dir, { recursive: true });
  const model = await startFakeLlm({ defaultChunkDelayMs: 0 });
  model.respond = sleepResponder({ schema: 'prose-then-json' });
  try {
    // The connection, saved as the app saves one; the prompt-only copy's server is remembered as refusing schemas.
    {
      const db = await openDatabase(dir);
      const providers = new Providers(db, new OwnerOnlyFileSecretStore(dir), { modelsDir: modelsDir(dir) });
      const provider = await providers.save({
        kind: 'openai-compatible',
        name: 'Fake prose model',
        baseUrl: model.baseUrl,
        model: 'fake-model',
        ...(opts.contextTokens !== undefined ? { contextTokens: opts.contextTokens } : {}),
      });
      if (name === 'prompt-only') await providers.rememberSchemaRefusal(provider.id, 'benchmark: this connection is asked by the prompt alone');
      await new SettingsStore(db, () => {}).update({
        chatProviderId: provider.id,
        timeZone: 'UTC',
        sleep: { auto: false, maxCallsPerNight: 10_000, maxTokensPerNight: 100_000_000, nap: false },
      });
      await db.close();
    }
    const host = await createHost({ dataDir: dir, detectLocalServers: false, log: () => {} });
    const finished = new Map<number, ApiEvents['sleep.finished']>();
    host.on((event, payload) => {
      if (event === 'sleep.finished') finished.set((payload as ApiEvents['sleep.finished']).runId, payload as ApiEvents['sleep.finished']);
    });
    const runIds: number[] = [];
    let failedNights = 0;
    for (let n = 1; n <= MAX_CYCLES; n++) {
      const { runId } = await host.api['sleep.now']({});
      if (runId === null) opts.fail(`prose-then-json (${name}): sleep.now started no cycle`);
      const deadline = performance.now() + CYCLE_TIMEOUT_MS;
      while (!finished.has(runId) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      const end = finished.get(runId) ?? opts.fail(`prose-then-json (${name}): run ${runId} did not finish in time`);
      runIds.push(runId);
      const run = (await host.api['sleep.runs']({ limit: 5 })).find((r) => r.id === runId);
      const ls = run?.steps.find((x) => x.stepId === 'light-sleep')?.stats;
      console.log(
        `prose-then-json, ${name}: night ${n} ${end.status}${end.error ? ` (${end.error})` : ''}` +
          (ls ? `; light sleep ${ls.calls ?? 0} calls, ${ls.invalid_chunks ?? 0} unusable chunks` : ''),
      );
      if (end.status === 'failed') failedNights++;
      if (end.status !== 'stopped' && !((ls?.deferred_chunks ?? 0) > 0) && !((ls?.invalid_chunks ?? 0) > 0)) break;
    }
    await host.close();

    const db = await openDatabase(dir);
    try {
      const rows = (
        await db.query<{ status: string; asked: string | null; repair: boolean }>(
          `SELECT status, asked, position($2 in prompt) > 0 AS repair FROM auto_llm_runs WHERE run_id = ANY($1::bigint[])`,
          [runIds, REPAIR_REQUEST],
        )
      ).rows;
      const memories = Number(
        (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM memories WHERE source IN ('light-sleep', 'deep-sleep')`)).rows[0]!.n,
      );
      return {
        nights: runIds.length,
        calls: rows.length,
        unusable: rows.filter((r) => r.status === 'invalid').length,
        repair_calls: rows.filter((r) => r.repair).length,
        asked_with_schema: rows.filter((r) => r.asked === 'schema').length,
        memories,
        failed_nights: failedNights,
      };
    } finally {
      await db.close();
    }
  } finally {
    await model.close();
  }
}

export function printProseThenJson(r: ProseThenJsonResult): void {
  console.log('\nprose-then-json: a model that answers in prose unless held to the answer schema (per night)');
  console.log(['', 'nights', 'calls', 'unusable', 'repairs', 'with schema', 'memories'].map((h, i) => (i ? h.padStart(12) : h.padEnd(14))).join(''));
  for (const [label, v] of [
    ['structured', r.prose_then_json.structured],
    ['prompt only', r.prose_then_json.prompt_only],
  ] as const) {
    console.log(
      label.padEnd(14) + [v.nights, v.calls, v.unusable, v.repair_calls, v.asked_with_schema, v.memories].map((x) => String(x).padStart(12)).join(''),
    );
  }
  console.log(
    `unusable answers per night: structured ${r.structured_unusable}, prompt only ${r.prompt_only_unusable}; ` +
      `repair calls per night: structured ${r.structured_repair_calls}, prompt only ${r.prompt_only_repair_calls}`,
  );
}
