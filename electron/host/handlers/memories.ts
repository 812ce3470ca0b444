import { buildResident } from '../../memory/resident.js';
import type { DomainHandlers, HostServices } from './types.js';

export const memoriesHandlers = (s: HostServices): DomainHandlers<'memories' | 'recall'> => ({
  'memories.list': async (input) => {
    if (!input.query?.trim()) return s.memories.list(input);
    // Searching uses the companion's own recall, so the person sees what it would find.
    const hits = await s.recall.semantic({ query: input.query, types: input.types, limit: input.limit ?? 50 });
    const ids = hits.flatMap((h) => (h.link.kind === 'memory' ? [h.link.memoryId] : []));
    const found = new Map((await s.memories.getMany(ids)).map((m) => [m.id, m]));
    const items = ids.flatMap((id) => (found.has(id) ? [found.get(id)!] : [])).filter((m) => input.pinned === undefined || m.pinned === input.pinned);
    return { items, total: items.length };
  },
  'memories.get': async (input) => ({ ...(await s.memories.get(input.id)), sourceMessages: (await s.trash.memorySources(input.id)).length }),
  'memories.create': (input) =>
    s.memories.create({
      type: input.type,
      content: input.content,
      pinned: input.pinned,
      validFrom: input.validFrom,
      validTo: input.validTo,
      source: 'user',
      actor: 'person',
    }),
  'memories.update': ({ id, ...patch }) => s.memories.update(id, patch, 'person'),
  // Forgetting (with what it came from) and undo go through the forgetting room: an undone forget brings back the messages it hid.
  'memories.forget': (input) => s.trash.forgetMemory(input.id, input.withSources === true),
  'memories.pin': (input) => s.memories.pin(input.id, input.pinned, 'person'),
  'memories.reorderPins': (input) => s.memories.reorderPins(input.ids, 'person'),
  'memories.undo': (input) => s.trash.undoMemoryChange(input.changeId),
  'memories.resident': async () => {
    const settings = await s.settings.get();
    const { ids: _ids, ...preview } = await buildResident(s.db, { topN: settings.memory.residentTopN, log: s.log });
    return preview;
  },
  'recall.search': (input) => s.recall.search({ query: input.query, sources: input.sources, limit: input.limit }),
});
