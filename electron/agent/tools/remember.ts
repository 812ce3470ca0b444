// The companion's hands on its own semantic memory: one `remember` tool with four actions. Results
// are short plain sentences the model can act on; a bad call gets an error in words and writes nothing.
import { ApiError, MAX_MEMORY_CHARS, MEMORY_TYPES, type Memory, type MemoryType } from '../../../shared/api.js';
import type { ToolSpec } from '../../llm/types.js';
import type { MemoryStore } from '../../memory/store.js';

export const REMEMBER_ACTIONS = ['save', 'update', 'forget', 'list'] as const;
type Action = (typeof REMEMBER_ACTIONS)[number];

/** Longest summary a list line carries: enough to recognise a memory, never its whole body. */
export const LIST_SUMMARY_CHARS = 80;
const LIST_DEFAULT = 20;
const LIST_MAX = 50;

const DESCRIPTION = [
  'Your long-term memory of facts. Save what will matter in later conversations: a fact about the person or the world, something you did, an opinion, a preference, how to do something.',
  'One fact per memory, a sentence or two, understandable on its own (use names, not "he" or "she").',
  'Opinions and preferences are first-person and say whose they are: "I prefer short answers" for your own; "Mara prefers green tea" or "The person thinks …" for someone else\'s.',
  'Never save a credential (password, API key, token, private key): save where it lives instead, e.g. "The work API key is in the password manager under \'Work\'".',
  'Saving something an active memory already nearly says updates that memory instead of adding a copy; saving a new value for the same thing ("lives in Prague" after "lives in Brno") replaces the old memory, which is kept as history.',
  'update changes a memory by id; forget retires one that is wrong or no longer wanted (the person can bring it back); list shows ids and one-line summaries.',
  'When your reply uses a memory, cite it with [[anima:ID]] at the end of your reply.',
].join(' ');

const spec: ToolSpec = {
  name: 'remember',
  description: DESCRIPTION,
  parameters: {
    type: 'object',
    properties: {
      action: { type: 'string', enum: [...REMEMBER_ACTIONS], description: 'save a new memory, update or forget one by id, or list memories.' },
      id: { type: 'integer', minimum: 1, description: 'update, forget: the memory id (the number in [[anima:ID]]).' },
      type: {
        type: 'string',
        enum: [...MEMORY_TYPES],
        description:
          'save (required), update (optional). world: a fact about the world or a person. experience: something you did, first person. ' +
          'opinion: a judgement, saying whose. observation: what someone or something is like, summed up. preference: a liking or choice, saying whose. procedural: how to do something.',
      },
      content: { type: 'string', maxLength: MAX_MEMORY_CHARS, description: 'save (required), update (optional): the memory itself.' },
      validFrom: { type: 'string', description: 'Optional: when this became true (ISO 8601 date).' },
      validTo: { type: 'string', description: 'Optional: when this stops or stopped being true (ISO 8601 date).' },
      entityNames: { type: 'array', items: { type: 'string' }, description: 'save, optional: names of the people, places and things it mentions.' },
      types: { type: 'array', items: { type: 'string', enum: [...MEMORY_TYPES] }, description: 'list, optional: only these types.' },
      limit: { type: 'integer', minimum: 1, maximum: LIST_MAX, description: `list, optional: how many (default ${LIST_DEFAULT}).` },
    },
    required: ['action'],
    additionalProperties: false,
  },
};

/** A wrong argument, told to the model as an error it can correct. */
class BadArgs extends Error {}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}

function memoryId(value: unknown): number {
  // Models copy ids in whatever form they saw them: 12, "12", "[[anima:12]]".
  const m = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  const match = /^(?:\[\[anima:)?(\d{1,15})(?:\]\])?$/.exec(m);
  const id = match ? Number(match[1]) : NaN;
  if (!Number.isSafeInteger(id) || id < 1) throw new BadArgs('id is required: the number of the memory, as in [[anima:ID]].');
  return id;
}

function optionalString(args: Record<string, unknown>, key: string): string | undefined {
  const value = args[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new BadArgs(`${key} must be a string.`);
  return value;
}

function optionalType(value: unknown): MemoryType | undefined {
  if (value === undefined || value === null) return undefined;
  if (!MEMORY_TYPES.includes(value as MemoryType)) throw new BadArgs(`Unknown type "${String(value)}": use one of ${MEMORY_TYPES.join(', ')}.`);
  return value as MemoryType;
}

function summaryLine(m: Memory): string {
  return `#${m.id} · ${m.type}${m.pinned ? ' · pinned' : ''} · ${oneLine(m.content, LIST_SUMMARY_CHARS)}`;
}

export function rememberTool(store: MemoryStore, ctx: { sourceMessageId?: string }): { spec: ToolSpec; run(args: Record<string, unknown>): Promise<string> } {
  /** Tells the model (and, through it, the person) which memory a new value replaced. */
  const replaced = async (oldId: number, now: Memory): Promise<string> => {
    const [old] = await store.getMany([oldId]);
    const was = old ? ` ("${oneLine(old.content, 120)}")` : '';
    return `It replaces [[anima:${oldId}]]${was} with "${oneLine(now.content, 120)}": the same fact with a new value. The old memory is kept as history, linked to the new one; tell the person what you replaced — they can undo it in the Memories view.`;
  };

  const actions: Record<Action, (args: Record<string, unknown>) => Promise<string>> = {
    async save(args) {
      const type = optionalType(args.type);
      if (!type) throw new BadArgs(`type is required to save: one of ${MEMORY_TYPES.join(', ')}.`);
      const content = optionalString(args, 'content');
      if (!content?.trim()) throw new BadArgs('content is required to save: the fact, in a sentence or two.');
      const entityNames = args.entityNames;
      if (entityNames !== undefined && !(Array.isArray(entityNames) && entityNames.every((n) => typeof n === 'string'))) {
        throw new BadArgs('entityNames must be a list of names.');
      }
      const result = await store.create({
        type,
        content,
        validFrom: optionalString(args, 'validFrom'),
        validTo: optionalString(args, 'validTo'),
        entityNames: entityNames as string[] | undefined,
        source: 'tool',
        actor: 'companion',
        sourceMessageIds: ctx.sourceMessageId ? [ctx.sourceMessageId] : [],
      });
      const marker = `[[anima:${result.memory.id}]]`;
      if (result.outcome === 'skipped') {
        return `Not saved: the person asked to forget ${marker}, which came from the same message and says the same. It stays forgotten; save it again only if the person says it anew.`;
      }
      if (result.superseded !== undefined) return `Saved as ${marker}. ${await replaced(result.superseded, result.memory)}`;
      return result.outcome === 'created'
        ? `Saved as ${marker}.`
        : `Updated ${marker} instead of adding a copy: an active memory already said nearly the same. It now reads: "${oneLine(result.memory.content, 160)}"`;
    },

    async update(args) {
      const id = memoryId(args.id);
      const patch = {
        type: optionalType(args.type),
        content: optionalString(args, 'content'),
        validFrom: optionalString(args, 'validFrom'),
        validTo: optionalString(args, 'validTo'),
      };
      if (Object.values(patch).every((v) => v === undefined)) {
        throw new BadArgs('Nothing to update: give the new content, type, validFrom or validTo.');
      }
      const result = await store.update(id, patch, 'companion');
      if (result.superseded !== undefined) return `Saved the new value as [[anima:${result.memory.id}]]. ${await replaced(result.superseded, result.memory)}`;
      return `Updated [[anima:${result.memory.id}]].`;
    },

    async forget(args) {
      const result = await store.forget(memoryId(args.id), 'companion');
      return `Forgot [[anima:${result.memory.id}]]. It is kept out of recall; the person can bring it back from the Memories view.`;
    },

    async list(args) {
      const types = args.types === undefined || args.types === null ? undefined : args.types;
      if (types !== undefined && !(Array.isArray(types) && types.every((t) => MEMORY_TYPES.includes(t as MemoryType)))) {
        throw new BadArgs(`types must be a list of: ${MEMORY_TYPES.join(', ')}.`);
      }
      const limit = args.limit === undefined || args.limit === null ? LIST_DEFAULT : Number(args.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > LIST_MAX) throw new BadArgs(`limit must be a whole number from 1 to ${LIST_MAX}.`);
      const { items, total } = await store.list({ types: types as MemoryType[] | undefined, limit });
      if (total === 0) return 'No active memories yet.';
      const heading = `${items.length} of ${total} active memories (pinned first, then the most recently changed):`;
      return [heading, ...items.map(summaryLine)].join('\n');
    },
  };

  return {
    spec,
    async run(args) {
      const action = args.action;
      if (typeof action !== 'string' || !(REMEMBER_ACTIONS as readonly string[]).includes(action)) {
        return `Error: unknown action ${JSON.stringify(action ?? null)}: use one of ${REMEMBER_ACTIONS.join(', ')}. Nothing was changed.`;
      }
      try {
        return await actions[action as Action](args);
      } catch (err) {
        if (err instanceof BadArgs || err instanceof ApiError) return `Error: ${err.message} Nothing was changed.`;
        throw err;
      }
    },
  };
}
