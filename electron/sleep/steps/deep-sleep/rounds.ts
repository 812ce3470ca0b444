// Deep sleep's three rounds over tonight's review, each at most MAX_CALLS_PER_ROUND calls:
//   1. contradictions and expiry: a newer fact supersedes an older one, or closes its valid time;
//   2. split: a compound memory becomes atomic ones;
//   3. merge: near-duplicates (close, but below the automatic duplicate threshold) become one.
// Each operation the model proposes is checked against what it was shown, then applied as its own
// journal batch (Night.apply), so the digest undoes them one by one.
import { ApiError } from '../../../../shared/api.js';
import { similarMemoryPairs } from '../../../embed/duplicates.js';
import type { StepContext } from '../../dag.js';
import { contradictionAnswer, memoryLine, mergeAnswer, splitAnswer } from '../../schemas.js';
import type { SleepStepDeps } from '../deps.js';
import { pack, type Night, type RoundEnd } from './night.js';
import type { Review } from './review.js';
import type { MemoryOutline } from '../../../memory/store.js';

/** Calls per round per night: with three rounds, deep sleep makes at most six calls a night. */
export const MAX_CALLS_PER_ROUND = 2;
/** Same-type pairs at least this similar (pg_trgm) are merge candidates; above NEAR_DUPLICATE_SIMILARITY saving already merges them. */
const MERGE_SIMILARITY = 0.45;

const CONTRADICTION_INSTRUCTIONS = `Each group below lists memories that may be about the same thing, oldest first. Which one is older
is a matter of time, not of where it stands: compare the dates they were written, or, when both say from when they
are true ("true from"), those dates. Find where they disagree or where something stopped being true. Answer
{"operations": [...]} with {"reason", "op": "supersede", "older": id, "newer": id} when the newer memory replaces the
older one (the person moved, changed their mind, a fact was corrected), or {"reason", "op": "expire", "id", "validTo":
"YYYY-MM-DD"} when a memory stopped being true at a known date without a replacement. Write the reason first, in one
short sentence (what each memory says and why they cannot both be true now), and only then decide. Only real
contradictions; memories that merely differ are fine. An empty list is a good answer when nothing disagrees.`;

type Timed = Pick<MemoryOutline, 'validFrom' | 'createdAt'>;

/**
 * Which of two memories is older, by time and comparing like with like: when both say from when they
 * are true, those dates; otherwise (or when those are the same) when each was written. Never one's
 * valid_from against the other's creation time: a fact written long ago about last week is not newer
 * than one written yesterday. Negative when `a` is older, positive when `b` is, 0 when they tie.
 */
export function olderFirst(a: Timed, b: Timed): number {
  if (a.validFrom && b.validFrom) {
    const byValid = Date.parse(a.validFrom) - Date.parse(b.validFrom);
    if (byValid !== 0) return byValid;
  }
  return Date.parse(a.createdAt) - Date.parse(b.createdAt);
}

const SPLIT_INSTRUCTIONS = `Some memories below say several separate things at once. Split those into atomic memories, each one
fact that stands on its own (names, not pronouns): {"splits": [{"reason", "id", "parts": [{"type", "content"}]}]}.
Write the reason first, in one short sentence (which separate things the memory says), and only then the split. Keep
the meaning exactly; leave memories that are already one fact alone. An empty list is a good answer.`;

const MERGE_INSTRUCTIONS = `The groups below are memories that may say the same thing twice. Where they do, write the one memory that
keeps everything they say: {"merges": [{"reason", "ids": [...], "type", "content"}]}. Write the reason first, in one
short sentence (why they say the same thing), and only then which to merge. Only merge true duplicates; two different
facts about the same thing stay apart. An empty list is a good answer.`;

/**
 * Round 1: contradictions and expiry, each new memory with its nearest neighbours in the store. The
 * relations resting only on the memories that stopped being true tonight end too.
 */
export async function contradictionRound(
  deps: SleepStepDeps,
  ctx: StepContext,
  night: Night,
  review: Review,
  neighbours: Map<number, number[]>,
): Promise<RoundEnd> {
  const { ask, apply, bump } = night;
  const around = await deps.store.activeOutlines([...new Set([...neighbours.values()].flat())]);
  const groups: { id: number; text: string }[] = [];
  for (const id of review.order) {
    const others = (neighbours.get(id) ?? []).flatMap((n) => around.get(n) ?? []);
    // A neighbour may be newer than the memory under review (written later, or true from later): each
    // group is listed oldest first by time, as the instructions say.
    const members = [review.memories.get(id)!, ...others].sort(olderFirst);
    if (others.length) groups.push({ id, text: members.map((m) => memoryLine(m)).join('\n') });
  }
  const shown = new Set([...review.memories.keys(), ...around.keys()]);
  const outline = (id: number) => review.memories.get(id) ?? around.get(id);
  const round = pack(
    groups.map((g, i) => `### Group ${i + 1}\n${g.text}`),
    await night.budgetFor(CONTRADICTION_INSTRUCTIONS),
    MAX_CALLS_PER_ROUND,
  );
  review.waitFrom(groups[round.taken]?.id);
  // Memories that stopped being true tonight: the relations resting on them alone end too.
  const ended: number[] = [];
  for (const call of round.calls) {
    if (ctx.signal.aborted) return 'stopped';
    const answer = await ask('deep-sleep:contradictions', CONTRADICTION_INSTRUCTIONS, call.join('\n\n'), contradictionAnswer);
    for (const op of answer?.operations ?? []) {
      if (op.op === 'supersede') {
        if (!shown.has(op.older) || !shown.has(op.newer) || op.older === op.newer) {
          bump('refused');
          continue;
        }
        // The code checks the order by time too: the memory that is newer by time replaces the older.
        let { older, newer } = op;
        if (olderFirst(outline(older)!, outline(newer)!) > 0) {
          [older, newer] = [newer, older];
          bump('reordered');
        }
        if (await apply('superseded', (b, batch) => b.link(older, newer, 'deep-sleep', batch, op.reason).then(() => undefined))) ended.push(older);
      } else {
        if (!shown.has(op.id)) {
          bump('refused');
          continue;
        }
        if (await apply('expired', (b, batch) => b.expire(op.id, op.validTo, 'deep-sleep', batch, op.reason).then(() => undefined))) ended.push(op.id);
      }
    }
  }
  bump('relations_closed', (await deps.graph.closeUnsupported(ended, deps.now().toISOString(), 'deep-sleep')).length);
  return 'done';
}

/** A cheap test for a memory that may say several things: long, or more than one sentence or clause. */
const mayBeCompound = (content: string) => content.length > 160 || /[;；]|\.\s+\p{Lu}|。\s*\S/u.test(content.trim().replace(/[.。!?！？]$/u, ''));

/** Round 2: split compound memories (the cheap test picks the candidates; the model decides). */
export async function splitRound(deps: SleepStepDeps, ctx: StepContext, night: Night, review: Review): Promise<RoundEnd> {
  const { ask, apply, bump } = night;
  const stillActive = await deps.store.activeOutlines(review.order);
  const compound = review.order.flatMap((id) => stillActive.get(id) ?? []).filter((m) => mayBeCompound(m.content));
  const shown = new Set(compound.map((m) => m.id));
  const round = pack(
    compound.map((m) => memoryLine(m)),
    await night.budgetFor(SPLIT_INSTRUCTIONS),
    MAX_CALLS_PER_ROUND,
  );
  review.waitFrom(compound[round.taken]?.id);
  for (const call of round.calls) {
    if (ctx.signal.aborted) return 'stopped';
    const answer = await ask('deep-sleep:split', SPLIT_INSTRUCTIONS, call.join('\n'), splitAnswer);
    for (const s of answer?.splits ?? []) {
      if (!shown.has(s.id)) {
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
            await b.create({
              type: p.type,
              content: p.content,
              source: 'deep-sleep',
              actor: 'deep-sleep',
              sourceMessageIds: old.sourceMessageIds,
              entityNames: old.entityNames,
              validFrom: old.validFrom,
              validTo: old.validTo,
              batchId: batch,
              reason: `split from memory ${s.id}`,
            }),
          );
        }
        const first = written.find((p) => p.memory.id !== s.id);
        if (!first) throw new ApiError('conflict', 'the split parts are the memory itself');
        await b.link(s.id, first.memory.id, 'deep-sleep', batch, `split into ${written.map((p) => `#${p.memory.id}`).join(', ')}: ${s.reason}`);
        parts = written.map((p) => p.memory.id).filter((id) => id !== s.id);
      });
      // The relations the compound memory supported rest on its parts now.
      if (done) await deps.graph.carryEvidence([s.id], parts);
    }
  }
  return 'done';
}

/** Round 3: merge near-duplicates of the same type, among each memory and its neighbours. */
export async function mergeRound(deps: SleepStepDeps, ctx: StepContext, night: Night, review: Review, neighbours: Map<number, number[]>): Promise<RoundEnd> {
  const { ask, apply, bump } = night;
  const current = await deps.store.activeOutlines(review.order);
  const pairs: [number, number][] = [];
  for (const [id] of current) for (const n of neighbours.get(id) ?? []) pairs.push([id, n]);
  const similar = await deps.store.alikePairs(pairs, MERGE_SIMILARITY);
  // With an embedding model, also what says the same in other words (stored vectors, no model call).
  const byMeaning = await similarMemoryPairs(deps.db, deps.vectors.get(), [...current.keys()]);
  const groups = new Map<number, Set<number>>();
  const grouped = (a: number, b: number) => groups.get(a)?.has(b) || groups.get(b)?.has(a);
  for (const [a, b] of [...similar, ...byMeaning]) {
    if (!grouped(a, b)) groups.set(a, (groups.get(a) ?? new Set()).add(b));
  }
  const entries = [...groups.entries()].sort(([a], [b]) => review.order.indexOf(a) - review.order.indexOf(b));
  const involved = await deps.store.activeOutlines(entries.flatMap(([a, bs]) => [a, ...bs]));
  const shown = new Set(involved.keys());
  const texts = entries.map(
    ([a, bs], i) =>
      `### Group ${i + 1}\n${[a, ...bs]
        .flatMap((id) => involved.get(id) ?? [])
        .map((m) => memoryLine(m))
        .join('\n')}`,
  );
  const round = pack(texts, await night.budgetFor(MERGE_INSTRUCTIONS), MAX_CALLS_PER_ROUND);
  review.waitFrom(entries[round.taken]?.[0]);
  for (const call of round.calls) {
    if (ctx.signal.aborted) return 'stopped';
    const answer = await ask('deep-sleep:merge', MERGE_INSTRUCTIONS, call.join('\n\n'), mergeAnswer);
    for (const m of answer?.merges ?? []) {
      const ids = [...new Set(m.ids)];
      if (ids.length < 2 || ids.some((id) => !shown.has(id))) {
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
      if (done && mergedId !== null)
        await deps.graph.carryEvidence(
          ids.filter((id) => id !== mergedId),
          [mergedId],
        );
    }
  }
  return 'done';
}
