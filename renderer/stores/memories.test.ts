import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, type ApiMethod, type Memory, type MemoryChange } from '../../shared/api.js';
import { setClient } from '../api/index.js';
import { scriptedClient, type ScriptedClient } from '../api/scripted-client.js';
import { DEFAULT_FILTERS } from '../lib/memories.js';
import { testMemory as memory } from '../lib/testing/memory.js';
import { useApp } from './app.js';
import { resetMemoriesStore, useMemories } from './memories.js';

let handlers: ScriptedClient['handlers'];
let calls: ScriptedClient['calls'];

const detail = (m: Memory) => ({ memory: m, history: [], chain: [m] });
const count = (method: ApiMethod) => calls.filter((c) => c.method === method).length;

beforeEach(() => {
  useApp.setState({ view: 'chat' });
  const scripted = scriptedClient();
  ({ handlers, calls } = scripted);
  resetMemoriesStore();
  setClient(scripted.client);
});
afterEach(() => setClient(null));

describe('the memory cache behind chips', () => {
  it('fetches a memory once, however many chips ask at the same time', async () => {
    handlers['memories.get'] = ({ id }) => detail(memory({ id }));
    const s = useMemories.getState();
    await Promise.all([s.ensure(7), s.ensure(7), s.ensure(7)]);
    await useMemories.getState().ensure(7);
    expect(count('memories.get')).toBe(1);
    expect(useMemories.getState().cache[7]).toMatchObject({ status: 'ok', memory: { id: 7 } });
  });

  it('marks a memory the host does not know as missing, and a failed lookup as an error to retry', async () => {
    handlers['memories.get'] = ({ id }) => {
      if (id === 1) throw new ApiError('not_found', 'no memory 1');
      throw new ApiError('internal', 'database busy');
    };
    await useMemories.getState().ensure(1);
    await useMemories.getState().ensure(2);
    expect(useMemories.getState().cache[1]!.status).toBe('missing');
    expect(useMemories.getState().cache[2]!.status).toBe('error');
    handlers['memories.get'] = ({ id }) => detail(memory({ id }));
    await useMemories.getState().ensure(1);
    await useMemories.getState().ensure(2);
    expect(useMemories.getState().cache[1]!.status).toBe('missing');
    expect(useMemories.getState().cache[2]!.status).toBe('ok');
  });

  it('keeps what chat.injected said about memories for the reply being written', () => {
    useMemories.getState().noteInjected({ conversationId: 'c', messageId: 'a1', memories: [{ id: 3, type: 'preference', content: 'tea' }] });
    expect(useMemories.getState().injectedLive.a1).toEqual([3]);
    expect(useMemories.getState().peek[3]).toEqual({ id: 3, type: 'preference', content: 'tea' });
  });

  it('fetches a shown memory again when the journal says it changed', async () => {
    handlers['memories.get'] = ({ id }) => detail(memory({ id }));
    await useMemories.getState().ensure(4);
    handlers['memories.get'] = ({ id }) => detail(memory({ id, status: 'expired' }));
    const c: MemoryChange = {
      id: 9,
      memoryId: 4,
      action: 'forget',
      actor: 'companion',
      before: null,
      after: null,
      batchId: null,
      reason: null,
      undoneBy: null,
      createdAt: '',
    };
    useMemories.getState().noteChanged(c);
    await new Promise((r) => setTimeout(r, 10));
    expect(useMemories.getState().cache[4]!.memory!.status).toBe('expired');
    // A memory nobody shows is not fetched for nothing.
    useMemories.getState().noteChanged({ ...c, memoryId: 5 });
    expect(useMemories.getState().cache[5]).toBeUndefined();
  });
});

describe('the Memories list', () => {
  it('loads the active memories and knows when there is nothing at all', async () => {
    handlers['memories.list'] = () => ({ items: [], total: 0 });
    await useMemories.getState().refreshList();
    const s = useMemories.getState();
    expect(s.list).toMatchObject({ loaded: true, items: [], total: 0 });
    expect(s.anyAtAll).toBe(false);
    expect(calls.map((c) => c.input)).toEqual([
      { statuses: ['active'], limit: 50 },
      { statuses: ['active', 'superseded', 'expired'], limit: 1 },
    ]);
  });

  it('tells "nothing active" from "nothing at all"', async () => {
    handlers['memories.list'] = (input) =>
      input.statuses?.length === 3 ? { items: [memory({ id: 1, status: 'expired' })], total: 1 } : { items: [], total: 0 };
    await useMemories.getState().refreshList();
    expect(useMemories.getState().anyAtAll).toBe(true);
  });

  it('forgetting takes the card out of the active list and keeps the detail showing it', async () => {
    const a = memory({ id: 1 });
    const b = memory({ id: 2 });
    handlers['memories.list'] = () => ({ items: [a, b], total: 2 });
    handlers['memories.get'] = ({ id }) => detail(id === 1 ? a : b);
    await useMemories.getState().refreshList();
    useMemories.getState().select(1);
    await useMemories.getState().loadDetail(1);
    handlers['memories.forget'] = ({ id }) => ({ memory: memory({ id, status: 'expired' }), outcome: 'updated', changeId: 11 });
    const result = await useMemories.getState().forget(1);
    expect(result.changeId).toBe(11);
    const s = useMemories.getState();
    expect(s.list.items.map((m) => m.id)).toEqual([2]);
    expect(s.list.total).toBe(1);
    expect(s.detail!.data!.memory.status).toBe('expired');
    expect(s.cache[1]!.memory!.status).toBe('expired');
  });

  it('puts a new memory at the top and undo brings a forgotten one back', async () => {
    handlers['memories.list'] = () => ({ items: [memory({ id: 1 })], total: 1 });
    await useMemories.getState().refreshList();
    handlers['memories.create'] = (input) => ({ memory: memory({ id: 5, type: input.type, content: input.content }), outcome: 'created', changeId: 20 });
    await useMemories.getState().create({ type: 'opinion', content: 'New thought' });
    expect(useMemories.getState().list.items.map((m) => m.id)).toEqual([5, 1]);
    expect(useMemories.getState().list.total).toBe(2);

    useApp.setState({ view: 'memories' });
    handlers['memories.undo'] = () => memory({ id: 1, content: 'back' });
    handlers['memories.list'] = () => ({ items: [memory({ id: 5 }), memory({ id: 1, content: 'back' })], total: 2 });
    await useMemories.getState().undo(3);
    expect(useMemories.getState().cache[1]!.memory!.content).toBe('back');
    await new Promise((r) => setTimeout(r, 0));
    expect(useMemories.getState().list.items.map((m) => m.content)).toEqual(['memory 5', 'back']);
  });

  it('searches with the companion’s recall and fetches the memories behind the hits', async () => {
    handlers['recall.search'] = () => [
      { source: 'semantic', memoryType: 'world', text: 'Mara in Lisbon', time: '', score: 0.9, link: { kind: 'memory', memoryId: 8 } },
      { source: 'semantic', memoryType: 'world', text: 'Mara nurse', time: '', score: 0.4, link: { kind: 'memory', memoryId: 9 } },
    ];
    handlers['memories.get'] = ({ id }) => detail(memory({ id, referenceCount: id }));
    useMemories.setState({ query: 'sister Lisbon' });
    await useMemories.getState().runSearch();
    expect(calls[0]).toEqual({ method: 'recall.search', input: { query: 'sister Lisbon', sources: ['semantic'], limit: 40 } });
    expect(useMemories.getState().search.hits).toHaveLength(2);
    expect(useMemories.getState().cache[8]!.memory!.referenceCount).toBe(8);
    expect(useMemories.getState().cache[9]!.status).toBe('ok');
  });

  it('changing filters asks the host again from the start', async () => {
    handlers['memories.list'] = () => ({ items: [], total: 0 });
    useMemories.getState().setFilters({ ...DEFAULT_FILTERS, types: ['opinion'] });
    await new Promise((r) => setTimeout(r, 0));
    expect(calls[0]!.input).toEqual({ types: ['opinion'], statuses: ['active'], limit: 50 });
  });
});

describe('pins', () => {
  const pins = [memory({ id: 1, pinned: true, pinOrder: 0 }), memory({ id: 2, pinned: true, pinOrder: 1 }), memory({ id: 3, pinned: true, pinOrder: 2 })];

  it('load in their order and reorder at once, settling on the host’s answer', async () => {
    handlers['memories.list'] = () => ({ items: [pins[2]!, pins[0]!, pins[1]!], total: 3 });
    await useMemories.getState().refreshPins();
    expect(useMemories.getState().pins.items.map((m) => m.id)).toEqual([1, 2, 3]);

    let release!: () => void;
    handlers['memories.reorderPins'] = ({ ids }) =>
      new Promise((resolve) => {
        release = () => resolve(ids.map((id, i) => memory({ id, pinned: true, pinOrder: i })));
      });
    const done = useMemories.getState().reorderPins([2, 1, 3]);
    expect(useMemories.getState().pins.items.map((m) => m.id)).toEqual([2, 1, 3]);
    release();
    await done;
    expect(useMemories.getState().pins.items.map((m) => [m.id, m.pinOrder])).toEqual([
      [2, 0],
      [1, 1],
      [3, 2],
    ]);
  });

  it('go back to the host’s order when a reorder is refused', async () => {
    handlers['memories.list'] = () => ({ items: pins, total: 3 });
    await useMemories.getState().refreshPins();
    handlers['memories.reorderPins'] = () => {
      throw new ApiError('conflict', 'pins changed');
    };
    await expect(useMemories.getState().reorderPins([3, 2, 1])).rejects.toThrow('pins changed');
    await new Promise((r) => setTimeout(r, 0));
    expect(useMemories.getState().pins.items.map((m) => m.id)).toEqual([1, 2, 3]);
  });

  it('unpinning takes a memory off the list', async () => {
    handlers['memories.list'] = () => ({ items: pins, total: 3 });
    await useMemories.getState().refreshPins();
    handlers['memories.pin'] = ({ id, pinned }) => ({ memory: memory({ id, pinned }), outcome: 'updated', changeId: 30 });
    handlers['memories.list'] = () => ({ items: [pins[0]!, pins[2]!], total: 2 });
    await useMemories.getState().setPinned(2, false);
    expect(useMemories.getState().pins.items.map((m) => m.id)).toEqual([1, 3]);
  });
});
