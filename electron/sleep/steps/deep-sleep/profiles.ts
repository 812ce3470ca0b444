// Observation profiles: the entities that gained facts get a short profile — an 'observation' memory
// per entity, written in one batched call, a newer one superseding the older.
import { randomUUID } from 'node:crypto';
import { ApiError } from '../../../../shared/api.js';
import { estimateTokens } from '../../../llm/context.js';
import { isRefusedName } from '../../../graph/mentions.js';
import { nameKey } from '../../../graph/names.js';
import { newestFacts, profileCandidates, profileMemoryIds } from '../../../graph/profiles.js';
import type { EntityKind } from '../../../graph/store.js';
import type { MemoryOutline } from '../../../memory/store.js';
import type { StepContext } from '../../dag.js';
import { entityHeading, memoryLine, PROFILE_SO_FAR, profileAnswer, type ProfileAnswer } from '../../schemas.js';
import { readCursor, saveCursor } from '../cursors.js';
import type { SleepStepDeps } from '../deps.js';
import type { Night } from './night.js';

const PROFILE_CURSOR = 'deep-sleep:profiles';
/** Entities profiled per night (one call); the rest wait, the one waiting longest always among them. */
export const MAX_PROFILES_PER_NIGHT = 8;
/** Memories read per night for names that gained facts. */
const PROFILE_SCAN = 500;
/** Facts shown per entity, newest first. */
const FACTS_PER_PROFILE = 12;

const PROFILE_INSTRUCTIONS = `Below are people, places and things I know about. Under each ("## Entity e1 — name (kind)") are the
memories I hold about it ("[#id] (type; …) text") and, when I wrote one before, my profile so far. For each entity write
a short profile: who or what this is, to me and to the person I talk with — two to four sentences in my own words, first
person ("Mara is the person I talk with most evenings; she …"), only from the memories shown, newer ones winning over
older ones. Answer {"profiles": [{"entity": "e1", "content", "sources": [ids of the memories it rests on]}]}, one per
entity listed. Never a password, key or card number.`;

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

/** One entity's part of the call: its reference in the prompt ("e1"), its text, and the facts it shows. */
interface ProfileSection {
  target: ProfileTarget;
  ref: string;
  text: string;
  shownFacts: Map<number, MemoryOutline>;
}

/**
 * Profiles: the entities named by memories written since the last profiles (memories.entity_names,
 * resolved as the graph indexer resolves them, so the night does not depend on whether the indexer
 * has caught up), each with the facts it gained since its own profile; at most
 * MAX_PROFILES_PER_NIGHT of them, most new facts first (plus the one waiting longest, so none
 * waits for ever), the companion itself left out. One call asks for all of them; each profile is an
 * 'observation' memory, written with its link in one batch, superseding the entity's older profile.
 */
export async function profileRound(deps: SleepStepDeps, ctx: StepContext, night: Night): Promise<void> {
  // One profile call per sleep day: a night run again ("sleep now" twice) leaves the rest to the next one.
  const profiledTonight = await deps.db.query(
    `SELECT 1 FROM auto_llm_runs a JOIN sleep_runs r ON r.id = a.run_id WHERE r.sleep_day = $1 AND a.purpose = 'deep-sleep:profiles' LIMIT 1`,
    [ctx.sleepDay],
  );
  if (profiledTonight.rows.length) return;
  const start = await readCursor(deps.db, PROFILE_CURSOR);
  const top = await deps.store.lastId();
  if (top <= start) return;
  const { candidates, end } = await entitiesWithNewFacts(deps, start, top);
  if (!candidates.length) return saveCursor(deps.db, PROFILE_CURSOR, end);
  const chosen = chooseTonight(candidates);

  const sections = await profileSections(deps, chosen, await night.budgetFor(PROFILE_INSTRUCTIONS));
  const asked = new Set(sections.map((s) => s.target));
  const waiting = candidates.filter((c) => !asked.has(c));
  if (waiting.length) night.bump('profiles_deferred', waiting.length);
  const cursor = waiting.length ? Math.max(start, Math.min(...waiting.flatMap((w) => w.fresh)) - 1) : end;
  if (!sections.length) return saveCursor(deps.db, PROFILE_CURSOR, cursor);

  if (ctx.signal.aborted) return;
  const answer = await night.ask('deep-sleep:profiles', PROFILE_INSTRUCTIONS, sections.map((s) => s.text).join('\n\n'), profileAnswer);
  await writeProfiles(deps, night, sections, answer);
  await saveCursor(deps.db, PROFILE_CURSOR, cursor);
}

/**
 * The entities named by the memories with ids in (start, top] (at most PROFILE_SCAN of them; `end`
 * is where the scan stopped), each with those of its facts newer than its profile link.
 */
async function entitiesWithNewFacts(deps: SleepStepDeps, start: number, top: number): Promise<{ candidates: ProfileTarget[]; end: number }> {
  // Profiles themselves and deep sleep's rewordings (splits, merges) are not new facts.
  const rows = await deps.store.namingSince(start, top, { notFrom: 'deep-sleep', except: await profileMemoryIds(deps.db), limit: PROFILE_SCAN });
  const end = rows.length === PROFILE_SCAN ? rows[rows.length - 1]!.id : top;
  const ids = await deps.graph.ensureEntities(
    rows.flatMap((r) => r.entityNames),
    rows[0] ? new Date(rows[0].createdAt) : null,
  );
  const factsOf = new Map<number, number[]>();
  for (const r of rows) {
    for (const entityId of new Set(r.entityNames.flatMap((n) => ids.get(nameKey(n)) ?? []))) factsOf.set(entityId, [...(factsOf.get(entityId) ?? []), r.id]);
  }
  const candidates: ProfileTarget[] = [];
  for (const e of await profileCandidates(deps.db, [...factsOf.keys()])) {
    // A weekday, a month, a pronoun is no one to profile, even when a model listed it as a name (the
    // person's own entity is called "You", and is the one exception).
    if (e.kind !== 'user' && isRefusedName(e.name)) continue;
    const fresh = (factsOf.get(e.id) ?? []).filter((m) => m > (e.profileMemoryId ?? 0));
    if (fresh.length) candidates.push({ id: e.id, name: e.name, kind: e.kind, linked: e.profileMemoryId, current: null, fresh });
  }
  return { candidates, end };
}

/** Tonight's entities: the most new facts first, and the one waiting longest always among them. Sorts `candidates`. */
function chooseTonight(candidates: ProfileTarget[]): ProfileTarget[] {
  candidates.sort((a, b) => b.fresh.length - a.fresh.length || Math.max(...b.fresh) - Math.max(...a.fresh) || a.id - b.id);
  const oldest = [...candidates].sort((a, b) => Math.min(...a.fresh) - Math.min(...b.fresh) || a.id - b.id)[0]!;
  const chosen = candidates.slice(0, MAX_PROFILES_PER_NIGHT);
  if (!chosen.includes(oldest)) chosen[chosen.length - 1] = oldest;
  return chosen;
}

/**
 * Each entity's section: its heading, the profile so far, its facts newest first — as many
 * entities as one call's material (`budget`) holds (a long section loses its oldest facts first).
 */
async function profileSections(deps: SleepStepDeps, chosen: ProfileTarget[], budget: number): Promise<ProfileSection[]> {
  const sections: ProfileSection[] = [];
  let used = 0;
  for (const target of chosen) {
    target.current = await deps.graph.profileOf(target.id);
    const current = target.current === null ? null : ((await deps.store.activeOutlines([target.current])).get(target.current) ?? null);
    const factIds = await newestFacts(deps.db, target.id, target.fresh, target.current, FACTS_PER_PROFILE);
    const facts = await deps.store.activeOutlines(factIds);
    const ref = `e${sections.length + 1}`;
    const head = [entityHeading(ref, target.name, target.kind), ...(current ? [`${PROFILE_SO_FAR}${current.content.replace(/\s*\n+\s*/g, ' ')}`] : [])];
    let shown = factIds.filter((id) => facts.has(id));
    const render = () => [...head, ...shown.map((id) => memoryLine(facts.get(id)!))].join('\n');
    while (shown.length > 1 && used + estimateTokens(render()) + 4 > budget) shown = shown.slice(0, -1);
    const cost = estimateTokens(render()) + 4;
    if (!shown.length || used + cost > budget) continue;
    used += cost;
    sections.push({ target, ref, text: render(), shownFacts: new Map(shown.map((id) => [id, facts.get(id)!])) });
  }
  return sections;
}

/** Writes each profile answered for a section: a new 'observation' memory (or one superseding the entity's profile) and its link, in one batch. */
async function writeProfiles(deps: SleepStepDeps, night: Night, sections: ProfileSection[], answer: ProfileAnswer | null): Promise<void> {
  const done = new Set<string>();
  for (const p of answer?.profiles ?? []) {
    const section = sections.find((s) => s.ref === p.entity);
    if (!section || done.has(p.entity)) {
      night.bump('profiles_refused');
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
      sourceMessageIds: [...new Set(sources.flatMap((id) => shownFacts.get(id)!.sourceMessageIds))].slice(0, 50),
      reason: `profile of ${target.name} (entity ${target.id}), from ${sources.map((id) => `#${id}`).join(', ')}`,
      // Two entities' profiles may read alike; each keeps its own memory.
      keepApart: true,
    };
    try {
      const superseded = await deps.store.batch(async (b) => {
        const old = target.current === null ? null : await b.get(target.current);
        const saved = old?.status === 'active' ? await b.supersede(old.id, write, 'deep-sleep') : await b.create({ ...write, batchId: randomUUID() });
        // The person forgot this profile: the entity is not pointed at it again.
        if (saved.outcome === 'skipped') return 'forgotten' as const;
        await deps.graph.setProfileIn(b.tx, target.id, saved.memory.id);
        return old?.status === 'active' && saved.memory.id !== old.id;
      });
      if (superseded === 'forgotten') {
        night.bump('profiles_forgotten_skipped');
        continue;
      }
      night.bump('profiles');
      if (superseded) night.bump('profiles_superseded');
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      // A guard refused it (a secret in the words): the entity keeps the profile it had.
      night.bump('profiles_refused');
      deps.log('info', `deep sleep: the profile of entity ${target.id} was refused: ${err.message}`);
    }
  }
}
