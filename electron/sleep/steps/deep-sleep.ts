// deep-sleep: after light sleep, the companion reconsiders what it knows, in rounds —
//   1. contradictions and expiry: a newer fact supersedes an older one, or closes its valid time;
//   2. split: a compound memory becomes atomic ones;
//   3. merge: near-duplicates (close, but below the automatic duplicate threshold) become one;
//   4. pin review: stale pins and much-used memories become proposals for the person (no model);
// and in the entity graph: typed relations whose memories were superseded or expired, or that a
// newer relation of a single-valued kind replaced, are closed (valid_to; journalled, undoable), and
// the entities that gained facts get a short profile — an 'observation' memory per entity, written in
// one batched call, a newer one superseding the older.
// It looks only at memories written since it last ran (a cursor on the change journal) and at their
// neighbours found by recall over the whole store — so two memories written months apart that
// disagree are found, yet the number of calls per night is capped and does not grow with the store.
// Nothing is deleted: every change is a supersede or an expiry with a link, journalled, undoable one
// by one (each operation is its own batch).
import { randomUUID } from 'node:crypto';
import { ApiError, type Memory } from '../../../shared/api.js';
import { estimateTokens } from '../../llm/context.js';
import { nameKey } from '../../graph/names.js';
import type { EntityKind } from '../../graph/store.js';
import { MAX_RESIDENT_PINNED } from '../../memory/resident.js';
import { similarMemoryPairs } from '../../embed/duplicates.js';
import { BudgetExhaustedError, type BackgroundModel } from '../background.js';
import { CycleStop, StepFailure, type SleepStep, type StepContext } from '../dag.js';
import { contradictionAnswer, entityHeading, memoryLine, mergeAnswer, PROFILE_SO_FAR, profileAnswer, splitAnswer } from '../schemas.js';
import type { z } from 'zod';
import { LIGHT_SLEEP } from './light-sleep.js';
import { SNAPSHOT } from './simple.js';
import { modelForRun, type SleepStepDeps } from './deps.js';

export const DEEP_SLEEP = 'deep-sleep';
const CURSOR = 'deep-sleep:memory_changes';
/** New memories reviewed per night; the rest wait for the next night (the cursor only passes what was reviewed). */
export const MAX_REVIEWED_PER_NIGHT = 60;
/** Calls per round per night: with three rounds, deep sleep makes at most six calls a night. */
export const MAX_CALLS_PER_ROUND = 2;
const NEIGHBOURS = 4;
/** Same-type pairs at least this similar (pg_trgm) are merge candidates; above NEAR_DUPLICATE_SIMILARITY saving already merges them. */
const MERGE_SIMILARITY = 0.45;
/** Pin review: a pin not cited for this long is proposed for unpinning; a memory cited this often, for pinning. */
const STALE_PIN_DAYS = 45;
const MUCH_USED_REFERENCES = 5;
const MAX_PROPOSALS = 5;

/**
 * Relations that hold one other end at a time. By source: someone lives in one place, works at one
 * place, studies at one school (a city has many people). Symmetric: one partner or spouse, whichever
 * way it was said. When light sleep adds a second open one, the older one ends where the newer
 * one begins; relations not listed here (likes, friend_of, sister_of) simply add up.
 */
export const SINGLE_VALUED_RELATIONS = ['lives_in', 'works_at', 'studies_at'] as const;
export const SYMMETRIC_SINGLE_VALUED_RELATIONS = ['partner_of', 'married_to', 'engaged_to'] as const;

const PROFILE_CURSOR = 'deep-sleep:profiles';
/** Entities profiled per night (one call); the rest wait, the one waiting longest always among them. */
export const MAX_PROFILES_PER_NIGHT = 8;
/** Memories read per night for names that gained facts. */
const PROFILE_SCAN = 500;
/** Facts shown per entity, newest first. */
const FACTS_PER_PROFILE = 12;

const CONTRADICTION_INSTRUCTIONS = `Each group below starts with a memory I wrote recently, followed by older memories that may be about
the same thing. Find where they disagree or where something stopped being true. Answer {"operations": [...]} with
{"op": "supersede", "older": id, "newer": id, "reason"} when the newer memory replaces the older one (the person moved,
changed their mind, a fact was corrected), or {"op": "expire", "id", "validTo": "YYYY-MM-DD", "reason"} when a memory
stopped being true at a known date without a replacement. Only real contradictions; memories that merely differ are fine.
An empty list is a good answer when nothing disagrees.`;

const SPLIT_INSTRUCTIONS = `Some memories below say several separate things at once. Split those into atomic memories, each one
fact that stands on its own (names, not pronouns): {"splits": [{"id", "parts": [{"type", "content"}], "reason"}]}.
Keep the meaning exactly; leave memories that are already one fact alone. An empty list is a good answer.`;

const PROFILE_INSTRUCTIONS = `Below are people, places and things I know about. Under each ("## Entity e1 — name (kind)") are the
memories I hold about it ("[#id] (type; …) text") and, when I wrote one before, my profile so far. For each entity write
a short profile: who or what this is, to me and to the person I talk with — two to four sentences in my own words, first
person ("Mara is the person I talk with most evenings; she …"), only from the memories shown, newer ones winning over
older ones. Answer {"profiles": [{"entity": "e1", "content", "sources": [ids of the memories it rests on]}]}, one per
entity listed. Never a password, key or card number.`;

const MERGE_INSTRUCTIONS = `The groups below are memories that may say the same thing twice. Where they do, write the one memory that
keeps everything they say: {"merges": [{"ids": [...], "type", "content", "reason"}]}. Only merge true duplicates; two
different facts about the same thing stay apart. An empty list is a good answer.`;

interface MemoryRow {
  id: number;
  type: Memory['type'];
  content: string;
  valid_from: Date | null;
  valid_to: Date | null;
  created_at: Date;
  source_message_ids: string[];
  entity_names: string[];
}

const line = (m: MemoryRow) =>
  memoryLine({ id: Number(m.id), type: m.type, content: m.content, validFrom: m.valid_from?.toISOString() ?? null, validTo: m.valid_to?.toISOString() ?? null, createdAt: m.created_at.toISOString() });

async function activeMemories(deps: SleepStepDeps, ids: number[]): Promise<Map<number, MemoryRow>> {
  if (ids.length === 0) return new Map();
  const rows = (
    await deps.db.query<MemoryRow>(
      `SELECT id::int AS id, type, content, valid_from, valid_to, created_at, source_message_ids, entity_names
         FROM memories WHERE id = ANY($1::bigint[]) AND status = 'active'`,
      [ids],
    )
  ).rows;
  return new Map(rows.map((r) => [Number(r.id), r]));
}

/**
 * Groups of text packed into at most `maxCalls` prompts of `budget` tokens; what does not fit waits.
 * `taken` is how many groups were dealt with (sent, or passed over because one alone exceeds a call);
 * groups from `taken` on did not fit tonight's calls.
 */
function pack(groups: string[], budget: number, maxCalls: number): { calls: string[][]; taken: number } {
  const calls: string[][] = [];
  let call: string[] = [];
  let used = 0;
  for (const [i, g] of groups.entries()) {
    const cost = estimateTokens(g) + 4;
    if (cost > budget) continue;
    if (used + cost > budget && call.length) {
      calls.push(call);
      if (calls.length === maxCalls) return { calls, taken: i };
      call = [];
      used = 0;
    }
    call.push(g);
    used += cost;
  }
  if (call.length && calls.length < maxCalls) calls.push(call);
  return { calls, taken: groups.length };
}

export function deepSleepStep(deps: SleepStepDeps, model: ReturnType<typeof modelForRun>): SleepStep {
  return {
    id: DEEP_SLEEP,
    dependsOn: [LIGHT_SLEEP, SNAPSHOT],
    async run(ctx): Promise<Record<string, number>> {
      const stats: Record<string, number> = {
        reviewed: 0,
        calls: 0,
        invalid: 0,
        superseded: 0,
        expired: 0,
        split: 0,
        merged: 0,
        refused: 0,
        proposals: 0,
        relations_closed: 0,
        profiles: 0,
      };
      const bump = (k: string, n = 1) => (stats[k] = (stats[k] ?? 0) + n);
      const graph = deps.graph;

      // What was written since the last deep sleep (by anyone but deep sleep itself), oldest first.
      const cursorRow = (await deps.db.query<{ value: number }>(`SELECT value::float8 AS value FROM sleep_cursors WHERE name = $1`, [CURSOR])).rows[0];
      const changes = (
        await deps.db.query<{ id: number; memory_id: number }>(
          `SELECT c.id::float8 AS id, c.memory_id::int AS memory_id FROM memory_changes c
            WHERE c.id > $1 AND c.action IN ('create', 'update') AND c.actor <> 'deep-sleep' AND c.undone_by IS NULL
            ORDER BY c.id`,
          [cursorRow ? Number(cursorRow.value) : 0],
        )
      ).rows;
      const fresh: number[] = [];
      const start = cursorRow ? Number(cursorRow.value) : 0;
      let cursor = start;
      for (const c of changes) {
        if (!fresh.includes(Number(c.memory_id))) {
          if (fresh.length === MAX_REVIEWED_PER_NIGHT) break;
          fresh.push(Number(c.memory_id));
        }
        cursor = Number(c.id);
      }
      const reviewed = await activeMemories(deps, fresh);
      // The reviewed memories in journal order. When a round's calls cannot show all of them, the
      // first one left out and everything after it wait for the next night (the cursor stops before
      // them): with a small context the cap on calls must slow the review down, not skip memories.
      let order = fresh.filter((id) => reviewed.has(id));
      const waiting = new Set<number>();
      const waitFrom = (id: number | undefined) => {
        const at = id === undefined ? -1 : order.indexOf(id);
        if (at < 0) return;
        for (const later of order.slice(at)) {
          reviewed.delete(later);
          waiting.add(later);
        }
        order = order.slice(0, at);
        stats.reviewed = order.length;
        stats.deferred_memories = waiting.size;
      };
      stats.reviewed = reviewed.size;

      let bg: BackgroundModel | null = null;
      const ask = async <T>(purpose: string, instructions: string, material: string, schema: z.ZodType<T>): Promise<T | null> => {
        bg ??= await model(ctx);
        let result;
        try {
          result = await bg.call({ purpose, stepId: ctx.stepId, runId: ctx.runId, instructions, material, schema, maxTokens: 2048, signal: ctx.signal });
        } catch (err) {
          if (err instanceof BudgetExhaustedError) throw new CycleStop(err.message, stats);
          throw err;
        }
        bump('calls');
        await ctx.heartbeat();
        if (result.ok) return result.value;
        if (result.kind === 'error') throw new StepFailure(`The background model did not answer during deep sleep: ${result.error}`, stats);
        bump('invalid');
        return null;
      };
      const budgetFor = async (instructions: string) => {
        bg ??= await model(ctx);
        return bg.materialBudget(instructions, 2048);
      };
      /** Applies one operation in its own transaction and batch: one undo per line of the digest. False when it was refused. */
      const apply = async (what: string, fn: (b: Parameters<Parameters<typeof deps.store.batch>[0]>[0], batchId: string) => Promise<void>): Promise<boolean> => {
        try {
          await deps.store.batch((b) => fn(b, randomUUID()));
          bump(what);
          return true;
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
          bump('refused');
          deps.log('info', `deep sleep: ${what} refused: ${err.message}`);
          return false;
        }
      };

      if (reviewed.size > 0) {
        // Round 1: contradictions and expiry, each new memory with its nearest neighbours in the store.
        const neighbours = new Map<number, number[]>();
        for (const [id, m] of reviewed) {
          const hits = await deps.recall.semantic({ query: m.content.slice(0, 500), limit: NEIGHBOURS + 1 });
          neighbours.set(id, hits.flatMap((h) => (h.link.kind === 'memory' && h.link.memoryId !== id ? [h.link.memoryId] : [])).slice(0, NEIGHBOURS));
        }
        const around = await activeMemories(deps, [...new Set([...neighbours.values()].flat())]);
        const groups: { id: number; text: string }[] = [];
        for (const id of order) {
          const others = (neighbours.get(id) ?? []).flatMap((n) => around.get(n) ?? []);
          if (others.length) groups.push({ id, text: [line(reviewed.get(id)!), ...others.map(line)].join('\n') });
        }
        const shown = new Set([...reviewed.keys(), ...around.keys()]);
        const round1 = pack(groups.map((g, i) => `### Group ${i + 1}\n${g.text}`), await budgetFor(CONTRADICTION_INSTRUCTIONS), MAX_CALLS_PER_ROUND);
        waitFrom(groups[round1.taken]?.id);
        // Memories that stopped being true tonight: the relations resting on them alone end too.
        const ended: number[] = [];
        for (const call of round1.calls) {
          if (ctx.signal.aborted) return stats;
          const answer = await ask('deep-sleep:contradictions', CONTRADICTION_INSTRUCTIONS, call.join('\n\n'), contradictionAnswer);
          for (const op of answer?.operations ?? []) {
            if (op.op === 'supersede') {
              if (!shown.has(op.older) || !shown.has(op.newer)) {
                bump('refused');
                continue;
              }
              if (await apply('superseded', (b, batch) => b.link(op.older, op.newer, 'deep-sleep', batch, op.reason).then(() => undefined))) ended.push(op.older);
            } else {
              if (!shown.has(op.id)) {
                bump('refused');
                continue;
              }
              if (await apply('expired', (b, batch) => b.expire(op.id, op.validTo, 'deep-sleep', batch, op.reason).then(() => undefined))) ended.push(op.id);
            }
          }
        }
        bump('relations_closed', (await graph.closeUnsupported(ended, deps.now().toISOString(), 'deep-sleep')).length);

        // Round 2: split compound memories (a cheap test picks the candidates; the model decides).
        const stillActive = await activeMemories(deps, order);
        const compound = order.flatMap((id) => stillActive.get(id) ?? []).filter(
          (m) => m.content.length > 160 || /[;；]|\.\s+\p{Lu}|。\s*\S/u.test(m.content.trim().replace(/[.。!?！？]$/u, '')),
        );
        const splitShown = new Set(compound.map((m) => Number(m.id)));
        const round2 = pack(compound.map(line), await budgetFor(SPLIT_INSTRUCTIONS), MAX_CALLS_PER_ROUND);
        waitFrom(compound[round2.taken] && Number(compound[round2.taken]!.id));
        for (const call of round2.calls) {
          if (ctx.signal.aborted) return stats;
          const answer = await ask('deep-sleep:split', SPLIT_INSTRUCTIONS, call.join('\n'), splitAnswer);
          for (const s of answer?.splits ?? []) {
            if (!splitShown.has(s.id)) {
              bump('refused');
              continue;
            }
            let parts: number[] = [];
            const done = await apply('split', async (b, batch) => {
              const old = await b.get(s.id);
              if (!old || old.status !== 'active') throw new ApiError('conflict', `memory ${s.id} is no longer active`);
              const written = [];
              for (const p of s.parts) {
                written.push(
                  await b.create({ type: p.type, content: p.content, source: 'deep-sleep', actor: 'deep-sleep', sourceMessageIds: old.sourceMessageIds, entityNames: old.entityNames, validFrom: old.validFrom, validTo: old.validTo, batchId: batch, reason: `split from memory ${s.id}` }),
                );
              }
              const first = written.find((p) => p.memory.id !== s.id);
              if (!first) throw new ApiError('conflict', 'the split parts are the memory itself');
              await b.link(s.id, first.memory.id, 'deep-sleep', batch, `split into ${written.map((p) => `#${p.memory.id}`).join(', ')}: ${s.reason}`);
              parts = written.map((p) => p.memory.id).filter((id) => id !== s.id);
            });
            // The relations the compound memory supported rest on its parts now.
            if (done) await graph.carryEvidence([s.id], parts);
          }
        }

        // Round 3: merge near-duplicates of the same type.
        const current = await activeMemories(deps, order);
        const pairs: [number, number][] = [];
        for (const [id] of current) for (const n of neighbours.get(id) ?? []) pairs.push([id, n]);
        const similar = pairs.length
          ? (
              await deps.db.query<{ a: number; b: number }>(
                `SELECT a.id::int AS a, b.id::int AS b FROM unnest($1::bigint[], $2::bigint[]) AS p (x, y)
                   JOIN memories a ON a.id = p.x JOIN memories b ON b.id = p.y
                  WHERE a.status = 'active' AND b.status = 'active' AND a.type = b.type AND similarity(a.content, b.content) >= $3`,
                [pairs.map((p) => p[0]), pairs.map((p) => p[1]), MERGE_SIMILARITY],
              )
            ).rows
          : [];
        // With an embedding model, also what says the same in other words (stored vectors, no model call).
        const byMeaning = await similarMemoryPairs(deps.db, deps.vectors.get(), [...current.keys()]);
        const mergeGroups = new Map<number, Set<number>>();
        const grouped = (a: number, b: number) => mergeGroups.get(a)?.has(b) || mergeGroups.get(b)?.has(a);
        for (const [a, b] of [...similar.map((r) => [Number(r.a), Number(r.b)] as const), ...byMeaning]) {
          if (!grouped(a, b)) mergeGroups.set(a, (mergeGroups.get(a) ?? new Set()).add(b));
        }
        const mergeEntries = [...mergeGroups.entries()].sort(([a], [b]) => order.indexOf(a) - order.indexOf(b));
        const involved = await activeMemories(deps, mergeEntries.flatMap(([a, bs]) => [a, ...bs]));
        const mergeShown = new Set(involved.keys());
        const mergeTexts = mergeEntries.map(([a, bs], i) => `### Group ${i + 1}\n${[a, ...bs].flatMap((id) => involved.get(id) ?? []).map(line).join('\n')}`);
        const round3 = pack(mergeTexts, await budgetFor(MERGE_INSTRUCTIONS), MAX_CALLS_PER_ROUND);
        waitFrom(mergeEntries[round3.taken]?.[0]);
        for (const call of round3.calls) {
          if (ctx.signal.aborted) return stats;
          const answer = await ask('deep-sleep:merge', MERGE_INSTRUCTIONS, call.join('\n\n'), mergeAnswer);
          for (const m of answer?.merges ?? []) {
            const ids = [...new Set(m.ids)];
            if (ids.length < 2 || ids.some((id) => !mergeShown.has(id))) {
              bump('refused');
              continue;
            }
            let mergedId: number | null = null;
            const done = await apply('merged', async (b, batch) => {
              const olds = [];
              for (const id of ids) {
                const old = await b.get(id);
                if (!old || old.status !== 'active') throw new ApiError('conflict', `memory ${id} is no longer active`);
                olds.push(old);
              }
              const merged = await b.create({
                type: m.type,
                content: m.content,
                source: 'deep-sleep',
                actor: 'deep-sleep',
                sourceMessageIds: [...new Set(olds.flatMap((o) => o.sourceMessageIds))],
                entityNames: [...new Set(olds.flatMap((o) => o.entityNames))],
                batchId: batch,
                reason: `merge of ${ids.map((id) => `#${id}`).join(', ')}: ${m.reason}`,
              });
              // The olds point at the merged memory: their citations follow the link (memory-ref-sync).
              for (const id of ids) if (id !== merged.memory.id) await b.link(id, merged.memory.id, 'deep-sleep', batch, `merged into #${merged.memory.id}`);
              mergedId = merged.memory.id;
            });
            if (done && mergedId !== null) await graph.carryEvidence(ids.filter((id) => id !== mergedId), [mergedId]);
          }
        }
      }

      // Relations of a single-valued kind that a newer one replaced end where it begins (no model).
      const replaced = await graph.closeReplaced(SINGLE_VALUED_RELATIONS, SYMMETRIC_SINGLE_VALUED_RELATIONS, 'deep-sleep');
      bump('relations_closed', replaced.length);

      // Round 4: pin review — proposals only; pins are the person's.
      stats.proposals = await reviewPins(deps, ctx);
      const firstWaiting = changes.findIndex((c) => waiting.has(Number(c.memory_id)));
      if (firstWaiting >= 0) cursor = firstWaiting > 0 ? Number(changes[firstWaiting - 1]!.id) : start;
      // The review is done: its cursor moves before the profiles' call, which may find the budget spent.
      await saveCursor(deps, CURSOR, cursor);

      // Round 5: profiles of the entities that gained facts, in one call.
      if (ctx.signal.aborted) return stats;
      await profileRound(deps, ctx, { ask, budgetFor, bump });
      return stats;
    },
  };
}

async function saveCursor(deps: SleepStepDeps, name: string, value: number): Promise<void> {
  await deps.db.query(
    `INSERT INTO sleep_cursors (name, value) VALUES ($1, $2)
     ON CONFLICT (name) DO UPDATE SET value = greatest(sleep_cursors.value, EXCLUDED.value), updated_at = now()`,
    [name, value],
  );
}

interface ProfileTools {
  ask: <T>(purpose: string, instructions: string, material: string, schema: z.ZodType<T>) => Promise<T | null>;
  budgetFor: (instructions: string) => Promise<number>;
  bump: (k: string, n?: number) => void;
}

interface ProfileTarget {
  id: number;
  name: string;
  kind: EntityKind;
  /** The memory the entity's profile link points at (the per-entity cursor: facts after it are new). */
  linked: number | null;
  /** Its profile as it stands (EntityStore.profileOf), superseded by the new one. */
  current: number | null;
  fresh: number[];
}

/**
 * Profiles: the entities named by memories written since the last profiles (memories.entity_names,
 * resolved as the graph indexer resolves them, so the night does not depend on whether the indexer
 * has caught up), each with the facts it gained since its own profile; at most
 * MAX_PROFILES_PER_NIGHT of them, most new facts first (plus the one waiting longest, so none
 * waits for ever), the companion itself left out. One call asks for all of them; each profile is an
 * 'observation' memory, written with its link in one batch, superseding the entity's older profile.
 */
async function profileRound(deps: SleepStepDeps, ctx: StepContext, { ask, budgetFor, bump }: ProfileTools): Promise<void> {
  const graph = deps.graph;
  // One profile call per sleep day: a night run again ("sleep now" twice) leaves the rest to the next one.
  const profiledTonight = await deps.db.query(
    `SELECT 1 FROM auto_llm_runs a JOIN sleep_runs r ON r.id = a.run_id WHERE r.sleep_day = $1 AND a.purpose = 'deep-sleep:profiles' LIMIT 1`,
    [ctx.sleepDay],
  );
  if (profiledTonight.rows.length) return;
  const start = Number((await deps.db.query<{ value: number }>(`SELECT value::float8 AS value FROM sleep_cursors WHERE name = $1`, [PROFILE_CURSOR])).rows[0]?.value ?? 0);
  const top = Number((await deps.db.query<{ id: number | null }>(`SELECT max(id)::float8 AS id FROM memories`)).rows[0]?.id ?? 0);
  if (top <= start) return;
  // Profiles themselves and deep sleep's rewordings (splits, merges) are not new facts.
  const rows = (
    await deps.db.query<{ id: number; entity_names: string[]; created_at: Date }>(
      `SELECT id::float8 AS id, entity_names, created_at FROM memories
        WHERE id > $1 AND id <= $2 AND status = 'active' AND source <> 'deep-sleep' AND cardinality(entity_names) > 0
          AND id NOT IN (SELECT profile_memory_id FROM entities WHERE profile_memory_id IS NOT NULL)
        ORDER BY id LIMIT ${PROFILE_SCAN}`,
      [start, top],
    )
  ).rows.map((r) => ({ id: Number(r.id), names: r.entity_names, at: r.created_at }));
  const end = rows.length === PROFILE_SCAN ? rows[rows.length - 1]!.id : top;
  const ids = await graph.ensureEntities(
    rows.flatMap((r) => r.names),
    rows[0]?.at ?? null,
  );
  const factsOf = new Map<number, number[]>();
  for (const r of rows) {
    for (const entityId of new Set(r.names.flatMap((n) => ids.get(nameKey(n)) ?? []))) factsOf.set(entityId, [...(factsOf.get(entityId) ?? []), r.id]);
  }
  const entities = (
    await deps.db.query<{ id: number; name: string; kind: EntityKind; profile_memory_id: number | null }>(
      `SELECT id::float8 AS id, name, kind, profile_memory_id::float8 AS profile_memory_id FROM entities
        WHERE id = ANY($1::bigint[]) AND status = 'active' AND kind <> 'self'`,
      [[...factsOf.keys()]],
    )
  ).rows;
  const candidates: ProfileTarget[] = [];
  for (const e of entities) {
    const linked = e.profile_memory_id === null ? null : Number(e.profile_memory_id);
    const fresh = (factsOf.get(Number(e.id)) ?? []).filter((m) => m > (linked ?? 0));
    if (fresh.length) candidates.push({ id: Number(e.id), name: e.name, kind: e.kind, linked, current: null, fresh });
  }
  if (!candidates.length) return saveCursor(deps, PROFILE_CURSOR, end);
  candidates.sort((a, b) => b.fresh.length - a.fresh.length || Math.max(...b.fresh) - Math.max(...a.fresh) || a.id - b.id);
  const oldest = [...candidates].sort((a, b) => Math.min(...a.fresh) - Math.min(...b.fresh) || a.id - b.id)[0]!;
  const chosen = candidates.slice(0, MAX_PROFILES_PER_NIGHT);
  if (!chosen.includes(oldest)) chosen[chosen.length - 1] = oldest;

  // Each entity's section: its heading, the profile so far, its facts newest first — as many
  // entities as one call's material holds (a long section loses its oldest facts first).
  const budget = await budgetFor(PROFILE_INSTRUCTIONS);
  const sections: { target: ProfileTarget; ref: string; text: string; shownFacts: Map<number, MemoryRow> }[] = [];
  let used = 0;
  for (const target of chosen) {
    target.current = await graph.profileOf(target.id);
    const current = target.current === null ? null : (await activeMemories(deps, [target.current])).get(target.current) ?? null;
    const factIds = (
      await deps.db.query<{ id: number }>(
        `SELECT m.id::float8 AS id FROM memories m
          WHERE m.status = 'active' AND m.id IS DISTINCT FROM $3::bigint
            AND (m.id = ANY($2::bigint[]) OR m.id IN (SELECT memory_id FROM entity_mentions WHERE entity_id = $1 AND memory_id IS NOT NULL))
            AND m.id NOT IN (SELECT profile_memory_id FROM entities WHERE profile_memory_id IS NOT NULL)
          ORDER BY m.created_at DESC, m.id DESC LIMIT ${FACTS_PER_PROFILE}`,
        [target.id, target.fresh, target.current],
      )
    ).rows.map((r) => Number(r.id));
    const facts = await activeMemories(deps, factIds);
    const ref = `e${sections.length + 1}`;
    const head = [entityHeading(ref, target.name, target.kind), ...(current ? [`${PROFILE_SO_FAR}${current.content.replace(/\s*\n+\s*/g, ' ')}`] : [])];
    let shown = factIds.filter((id) => facts.has(id));
    const render = () => [...head, ...shown.map((id) => line(facts.get(id)!))].join('\n');
    while (shown.length > 1 && used + estimateTokens(render()) + 4 > budget) shown = shown.slice(0, -1);
    const cost = estimateTokens(render()) + 4;
    if (!shown.length || used + cost > budget) continue;
    used += cost;
    sections.push({ target, ref, text: render(), shownFacts: new Map(shown.map((id) => [id, facts.get(id)!])) });
  }
  const asked = new Set(sections.map((s) => s.target));
  const waiting = candidates.filter((c) => !asked.has(c));
  if (waiting.length) bump('profiles_deferred', waiting.length);
  const cursor = waiting.length ? Math.max(start, Math.min(...waiting.flatMap((w) => w.fresh)) - 1) : end;
  if (!sections.length) return saveCursor(deps, PROFILE_CURSOR, cursor);

  if (ctx.signal.aborted) return;
  const answer = await ask('deep-sleep:profiles', PROFILE_INSTRUCTIONS, sections.map((s) => s.text).join('\n\n'), profileAnswer);
  const done = new Set<string>();
  for (const p of answer?.profiles ?? []) {
    const section = sections.find((s) => s.ref === p.entity);
    if (!section || done.has(p.entity)) {
      bump('profiles_refused');
      continue;
    }
    done.add(p.entity);
    const { target, shownFacts } = section;
    const cited = [...new Set(p.sources)].filter((id) => shownFacts.has(id));
    const sources = cited.length ? cited : [...shownFacts.keys()];
    const write = {
      type: 'observation' as const,
      content: p.content,
      source: 'deep-sleep' as const,
      actor: 'deep-sleep' as const,
      entityNames: [target.name],
      sourceMessageIds: [...new Set(sources.flatMap((id) => shownFacts.get(id)!.source_message_ids))].slice(0, 50),
      reason: `profile of ${target.name} (entity ${target.id}), from ${sources.map((id) => `#${id}`).join(', ')}`,
      // Two entities' profiles may read alike; each keeps its own memory.
      keepApart: true,
    };
    try {
      const superseded = await deps.store.batch(async (b) => {
        const old = target.current === null ? null : await b.get(target.current);
        const saved = old?.status === 'active' ? await b.supersede(old.id, write, 'deep-sleep') : await b.create({ ...write, batchId: randomUUID() });
        await graph.setProfileIn(b.tx, target.id, saved.memory.id);
        return old?.status === 'active' && saved.memory.id !== old.id;
      });
      bump('profiles');
      if (superseded) bump('profiles_superseded');
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      // A guard refused it (a secret in the words): the entity keeps the profile it had.
      bump('profiles_refused');
      deps.log('info', `deep sleep: the profile of entity ${target.id} was refused: ${err.message}`);
    }
  }
  await saveCursor(deps, PROFILE_CURSOR, cursor);
}

async function reviewPins(deps: SleepStepDeps, ctx: StepContext): Promise<number> {
  const now = deps.now();
  const pinned = (await deps.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM memories WHERE status = 'active' AND pinned`)).rows[0]!.n;
  const stale = (
    await deps.db.query<{ id: number; last: Date | null }>(
      `SELECT m.id::int AS id, max(r.created_at) AS last FROM memories m LEFT JOIN memory_references r ON r.memory_id = m.id
        WHERE m.status = 'active' AND m.pinned AND m.updated_at < $1::timestamptz - make_interval(days => $2)
        GROUP BY m.id HAVING max(r.created_at) IS NULL OR max(r.created_at) < $1::timestamptz - make_interval(days => $2)
        ORDER BY max(r.created_at) NULLS FIRST, m.id LIMIT $3`,
      [now.toISOString(), STALE_PIN_DAYS, MAX_PROPOSALS],
    )
  ).rows;
  // Never propose more pins than the resident block carries (unpin proposals make room first).
  const room = Math.max(0, MAX_RESIDENT_PINNED - pinned);
  const used = (
    await deps.db.query<{ id: number; reference_count: number }>(
      `SELECT id::int AS id, reference_count FROM memories
        WHERE status = 'active' AND NOT pinned AND reference_count >= $1 ORDER BY reference_count DESC, id LIMIT $2`,
      [MUCH_USED_REFERENCES, Math.min(room, MAX_PROPOSALS)],
    )
  ).rows;
  const proposals = [
    ...stale.map((r) => ({ id: Number(r.id), action: 'unpin', reason: r.last ? `not used since ${r.last.toISOString().slice(0, 10)}` : 'pinned, but never used in a reply' })),
    ...used.map((r) => ({ id: Number(r.id), action: 'pin', reason: `used in ${r.reference_count} replies` })),
  ];
  let added = 0;
  for (const p of proposals) {
    const r = await deps.db.query(
      `INSERT INTO sleep_proposals (run_id, memory_id, action, reason) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING id`,
      [ctx.runId, p.id, p.action, p.reason],
    );
    added += r.rows.length;
  }
  return added;
}
