import i18next, { type TFunction } from 'i18next';
import { describe, expect, it } from 'vitest';
import type { EntityChange, EntityDetail, EntityEdge } from '../../../shared/api.js';
import en from '../../i18n/en.js';
import zhCN from '../../i18n/zh-CN.js';
import { humanRelation } from '../../stores/graph.js';
import { historyText, type HistoryWords } from './history.js';

async function wordsFor(lng: 'en' | 'zh-CN'): Promise<HistoryWords> {
  const i18n = i18next.createInstance();
  await i18n.init({ resources: { en: { translation: en }, 'zh-CN': { translation: zhCN } }, lng, fallbackLng: 'en', interpolation: { escapeValue: false } });
  const t = i18n.t.bind(i18n) as TFunction;
  return {
    t: (key, options) => t(key, options) as string,
    // As useRelationLabel and useDayFormat do it.
    relationLabel: (relation) => t(`graph.relations.${relation}`, { defaultValue: humanRelation(relation) }) as string,
    day: (day) => new Intl.DateTimeFormat(lng, { timeZone: 'UTC', year: 'numeric', month: 'short', day: 'numeric' }).format(new Date(`${day}T00:00:00.000Z`)),
  };
}

const ANA = {
  id: 3,
  kind: 'person' as const,
  name: 'Ana',
  aliases: [],
  mentionCount: 4,
  firstSeen: null,
  lastSeen: null,
  status: 'active' as const,
  mergedInto: null,
};
const LISBON = {
  id: 5,
  kind: 'place' as const,
  name: 'Lisbon',
  aliases: [],
  mentionCount: 2,
  firstSeen: null,
  lastSeen: null,
  status: 'active' as const,
  mergedInto: null,
};

function edge(id: number, source: number, target: number, relation: string, over: Partial<EntityEdge> = {}): EntityEdge {
  return { id, source, target, relation, weight: 1, validFrom: null, validTo: null, evidenceMemoryIds: [], ...over };
}
function change(action: EntityChange['action'], before: unknown, after: unknown): EntityChange {
  return { id: 1, entityId: 3, action, before, after, undoneBy: null, createdAt: '2025-07-02T03:00:00.000Z' };
}

const livesInLisbon = edge(10, ANA.id, LISBON.id, 'lives_in', { validFrom: '2025-06-01T00:00:00.000Z' });
const worksAt = edge(11, ANA.id, 9, 'works_at');
const livedInPorto = edge(12, ANA.id, 7, 'lives_in', { validFrom: '2019-09-01T00:00:00.000Z' });
const closedPorto = { ...livedInPorto, validTo: '2025-06-01T00:00:00.000Z' };

/** Ana's panel: she knows Lisbon, Northwind Labs and Porto by name through her connections. */
const anaPanel: Pick<EntityDetail, 'entity' | 'relations'> = {
  entity: ANA,
  relations: [
    { ...livesInLisbon, other: { id: LISBON.id, name: 'Lisbon', kind: 'place' } },
    { ...worksAt, other: { id: 9, name: 'Northwind Labs', kind: 'org' } },
    { ...closedPorto, other: { id: 7, name: 'Porto', kind: 'place' } },
  ],
};

const relate = change('relate', null, { edge: livesInLisbon });
const strengthen = change('strengthen', { edge: worksAt }, { edge: { ...worksAt, weight: 2 } });
const close = change('close', { edge: livedInPorto }, { cause: 'replaced', by: 10, edge: closedPorto });

describe('history lines for relations', () => {
  it('says what was learned, heard again and ended, with the other end by name (English)', async () => {
    const w = await wordsFor('en');
    expect(historyText(relate, anaPanel, w)).toBe('Learned: lives in Lisbon');
    expect(historyText(strengthen, anaPanel, w)).toBe('Heard again: works at Northwind Labs');
    expect(historyText(close, anaPanel, w)).toBe('No longer: lives in Porto (since Jun 1, 2025)');
  });

  it('says the same in Simplified Chinese', async () => {
    const w = await wordsFor('zh-CN');
    expect(historyText(relate, anaPanel, w)).toBe('得知：住在 Lisbon');
    expect(historyText(strengthen, anaPanel, w)).toBe('又听说：在…工作 Northwind Labs');
    expect(historyText(close, anaPanel, w)).toBe('已不再：住在 Porto（自 2025年6月1日 起）');
  });

  it('from the other end, says who; a name it does not know is left out, never an id', async () => {
    const w = await wordsFor('en');
    const lisbonPanel = { entity: LISBON, relations: [{ ...livesInLisbon, other: { id: ANA.id, name: 'Ana', kind: 'person' as const } }] };
    expect(historyText(relate, lisbonPanel, w)).toBe('Learned: Ana lives in Lisbon');
    expect(historyText(relate, { entity: LISBON, relations: [] }, w)).toBe('Learned: … lives in Lisbon');
    const unknown = change('relate', null, { edge: edge(20, ANA.id, 99, 'friend_of') });
    expect(historyText(unknown, anaPanel, w)).toBe('Learned: friend of');
    expect(historyText(unknown, anaPanel, w)).not.toMatch(/99/);
    // A relation the UI has no words for reads as written.
    expect(historyText(change('relate', null, { edge: edge(21, ANA.id, LISBON.id, 'sails_to') }), anaPanel, w)).toBe('Learned: sails to Lisbon');
    const zh = await wordsFor('zh-CN');
    expect(historyText(relate, { entity: LISBON, relations: [] }, zh)).toBe('得知：…住在 Lisbon');
  });

  it('a close without an end date, or a row without an edge, still reads', async () => {
    const w = await wordsFor('en');
    expect(historyText(change('close', { edge: livedInPorto }, { edge: { ...livedInPorto, validTo: null } }), anaPanel, w)).toBe('No longer: lives in Porto');
    expect(historyText(change('close', null, { cause: 'evidence' }), anaPanel, w)).toBe('A connection ended');
    expect(historyText(change('relate', null, null), anaPanel, w)).toBe('Learned a connection');
    expect(historyText(change('strengthen', 'odd', { edge: { relation: 3 } }), anaPanel, w)).toBe('Heard about a connection again');
    const zh = await wordsFor('zh-CN');
    expect(historyText(change('close', null, null), anaPanel, zh)).toBe('一条联系结束了');
  });

  it('keeps the other lines as they were', async () => {
    const w = await wordsFor('en');
    expect(historyText(change('rename', { name: 'Ana S.' }, { name: 'Ana' }), anaPanel, w)).toBe('Renamed (it was “Ana S.”)');
    expect(historyText(change('alias', null, { alias: 'Aninhas' }), anaPanel, w)).toBe('Also called “Aninhas”');
    expect(historyText(change('hide', { status: 'active' }, { status: 'hidden' }), anaPanel, w)).toBe('Hidden');
    expect(historyText(change('undo', { undoes: 4, action: 'relate' }, null), anaPanel, w)).toBe('Undid a change');
  });

  it('has a line for every action in both languages', async () => {
    const actions: EntityChange['action'][] = ['rename', 'alias', 'merge', 'hide', 'unhide', 'relate', 'strengthen', 'close', 'undo'];
    for (const lng of ['en', 'zh-CN'] as const) {
      const w = await wordsFor(lng);
      for (const action of actions) expect(historyText(change(action, null, null), anaPanel, w), `${lng} ${action}`).not.toMatch(/graph\.history/);
    }
  });
});
