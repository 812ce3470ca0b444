// The companion's recall tools: memory_recall over all four sources and memory_semantic_search over
// its semantic memories. Results are compact text lines, one per hit; a semantic hit carries its
// [[anima:ID]] marker, the only thing the model may cite. A bad call gets an error in words and
// searches nothing.
import { MEMORY_TYPES, RECALL_SOURCES, type MemoryType, type RecallSource } from '../../../shared/api.js';
import type { Database } from '../../db/open.js';
import type { ToolSpec } from '../../llm/types.js';
import { resolveEntityName } from '../../memory/recall/graph-walk.js';
import type { DetailedHit, Recall } from '../../memory/recall/index.js';
import { buildQuery, MAX_QUERY_CHARS } from '../../memory/recall/query.js';
import type { Tool } from './registry.js';

export const RECALL_DEFAULT_LIMIT = 10;
export const RECALL_MAX_LIMIT = 50;
/** Longest entity name (graph/names.ts checks the rest). */
const ENTITY_MAX_CHARS = 120;
/** A line shows at most this much of a hit (the model can recall again, narrower). */
const LINE_CHARS = 300;

const CITATION_RULE =
  'Citing: a semantic hit ends with its marker, [[anima:ID]] with its own number; when your reply uses it, put that marker, exactly as given, at the end of your reply. ' +
  'Session (past conversation), limbic and autobiographical (diary) hits have no marker and are never cited with one.';

const QUERY_HELP = 'Words are OR-ed (stop words ignored); use AND, OR, NOT in capitals and "quoted phrases" to be precise. Chinese works too.';

const recallSpec: ToolSpec = {
  name: 'memory_recall',
  description: [
    'Search everything you remember, ranked as one list: semantic memories (facts, preferences, experiences, opinions, observations, procedures), ' +
      'session (what was said in past conversations), limbic (moods and emotional imprints of days) and autobiographical (your diary narratives and dreams).',
    'Use it when the conversation needs something that is not in front of you.',
    QUERY_HELP,
    'To ask about one person, place or thing ("everything about Bob"), give its name as entity: only what mentions it comes back ' +
      '(under any of its other names too), ranked by the query — or newest first when the query is empty.',
    CITATION_RULE,
  ].join(' '),
  parameters: {
    type: 'object',
    properties: {
      query: {
        type: 'string',
        maxLength: MAX_QUERY_CHARS,
        description: 'What to look for: the words it would contain. May be empty ("") when entity is given.',
      },
      memory_types: {
        type: 'array',
        items: { type: 'string', enum: [...RECALL_SOURCES] },
        description: 'Optional: search only these sources (default all four).',
      },
      entity: {
        type: 'string',
        maxLength: ENTITY_MAX_CHARS,
        description: 'Optional: the name of one person, place, organisation or thing; only what mentions it is searched.',
      },
      limit: { type: 'integer', minimum: 1, maximum: RECALL_MAX_LIMIT, description: `Optional: how many hits (default ${RECALL_DEFAULT_LIMIT}).` },
    },
    required: ['query'],
    additionalProperties: false,
  },
};

const semanticSpec: ToolSpec = {
  name: 'memory_semantic_search',
  description: [
    'Search your semantic memories only (active ones): facts about the person and the world, their and your preferences and opinions, experiences, observations, procedures.',
    'Each hit shows its id as [[anima:ID]] (use the id with the remember tool to update or forget it).',
    QUERY_HELP,
    'Citing: when your reply uses a hit, put its [[anima:ID]] marker at the end of your reply, once per memory used.',
  ].join(' '),
  parameters: {
    type: 'object',
    properties: {
      query: { type: 'string', maxLength: MAX_QUERY_CHARS, description: 'What to look for: the words it would contain.' },
      types: { type: 'array', items: { type: 'string', enum: [...MEMORY_TYPES] }, description: 'Optional: only these memory types.' },
      limit: { type: 'integer', minimum: 1, maximum: RECALL_MAX_LIMIT, description: `Optional: how many hits (default ${RECALL_DEFAULT_LIMIT}).` },
    },
    required: ['query'],
    additionalProperties: false,
  },
};

class BadArgs extends Error {}

function entityArg(args: Record<string, unknown>): string | undefined {
  const v = args.entity;
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new BadArgs('entity must be a name (text), e.g. "Bob".');
  const name = v.trim();
  if (!name) return undefined;
  if (name.length > ENTITY_MAX_CHARS) throw new BadArgs(`entity is a name of at most ${ENTITY_MAX_CHARS} characters.`);
  return name;
}

function queryArg(args: Record<string, unknown>): string {
  const q = args.query;
  if (typeof q !== 'string' || q.trim() === '') throw new BadArgs('query is required: the words to look for.');
  return q;
}

function limitArg(args: Record<string, unknown>): number {
  const v = args.limit;
  if (v === undefined || v === null) return RECALL_DEFAULT_LIMIT;
  const n = typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > RECALL_MAX_LIMIT) {
    throw new BadArgs(`limit must be a whole number from 1 to ${RECALL_MAX_LIMIT}.`);
  }
  return n;
}

function listArg<T extends string>(args: Record<string, unknown>, key: string, allowed: readonly T[]): T[] | undefined {
  let v = args[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') v = [v];
  if (!Array.isArray(v)) throw new BadArgs(`${key} must be a list drawn from: ${allowed.join(', ')}.`);
  const bad = v.filter((x) => !allowed.includes(x as T));
  if (bad.length) throw new BadArgs(`Unknown ${key} ${bad.map((b) => `"${String(b)}"`).join(', ')}: use ${allowed.join(', ')}.`);
  return v.length ? [...new Set(v as T[])] : undefined;
}

function oneLine(text: string, max = LINE_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}

const day = (iso: string) => iso.slice(0, 10);

/** One hit as one line: `[source · type · date · who] text [[anima:ID]]`. */
export function formatHit(d: DetailedHit): string {
  const h = d.hit;
  switch (h.link.kind) {
    case 'memory':
      return `[semantic · ${h.memoryType} · ${day(h.time)}] ${oneLine(h.text)} [[anima:${h.link.memoryId}]]`;
    case 'message': {
      // The speaker is already the text's prefix when there is one; otherwise say whose words they were.
      const who = d.speaker ? '' : d.role === 'assistant' ? ' · you said' : ' · the person said';
      return `[session · ${day(h.time)}${who}] ${oneLine(h.text)}`;
    }
    case 'diary':
      return `[${h.source} · ${d.kind ?? h.source} · ${h.link.day}] ${oneLine(h.text)}`;
  }
}

function describe(hits: DetailedHit[], query: string, about?: { name: string; id: number }): string {
  const built = buildQuery(query);
  if (!built.tsquery && !about) return 'Nothing to search for: the query has no searchable words (only punctuation, stop words or operators).';
  const note = built.truncated ? ' (the query was long: only its start was used)' : '';
  const of = about ? ` about ${about.name}` : '';
  if (hits.length === 0) return about ? `Nothing that mentions ${about.name} matched${note}.` : `No memories matched${note}.`;
  const order = about && !built.tsquery ? 'newest first' : 'best first';
  return [`${hits.length} hit${hits.length === 1 ? '' : 's'}${of}, ${order}${note}:`, ...hits.map((h, i) => `${i + 1}. ${formatHit(h)}`)].join('\n');
}

/** The entity a name means, or BadArgs telling the model what to do instead. */
async function entityFor(db: Database, name: string): Promise<{ name: string; id: number }> {
  const found = await resolveEntityName(db, name);
  if (found.ok) return { name: found.entity.name, id: found.entity.id };
  if (found.reason === 'invalid' || found.reason === 'hidden') throw new BadArgs(`entity: ${found.message}`);
  if (found.reason === 'ambiguous') {
    const names = found.candidates
      .slice(0, 5)
      .map((c) => `"${c.name}"`)
      .join(', ');
    throw new BadArgs(`${found.message}: ${names}. Call again with one of those names as entity.`);
  }
  throw new BadArgs(
    `${found.message}: no person, place or thing by that name (or another name of it) has come up yet. Search without entity, with the name in the query instead.`,
  );
}

async function guarded(run: () => Promise<string>): Promise<string> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof BadArgs) return `Error: ${err.message}`;
    throw err;
  }
}

export function recallTools(db: Database, recall: Recall): Tool[] {
  return [
    {
      spec: recallSpec,
      run: (args) =>
        guarded(async () => {
          const name = entityArg(args);
          // With an entity the query may be left empty: everything that mentions it, newest first.
          const blank = args.query === undefined || args.query === null || (typeof args.query === 'string' && args.query.trim() === '');
          const query = name !== undefined && blank ? '' : queryArg(args);
          const sources = listArg<RecallSource>(args, 'memory_types', RECALL_SOURCES);
          const limit = limitArg(args);
          const about = name !== undefined ? await entityFor(db, name) : undefined;
          return describe(await recall.detailed({ query, sources, limit, entityIds: about ? [about.id] : undefined }), query, about);
        }),
    },
    {
      spec: semanticSpec,
      run: (args) =>
        guarded(async () => {
          const query = queryArg(args);
          const types = listArg<MemoryType>(args, 'types', MEMORY_TYPES);
          const limit = limitArg(args);
          return describe(await recall.detailed({ query, sources: ['semantic'], memoryTypes: types, limit }), query);
        }),
    },
  ];
}
