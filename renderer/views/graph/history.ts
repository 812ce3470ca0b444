// One line of an entity's change history in words: "Renamed (it was “Ana S.”)", "Learned: lives in
// Lisbon", "No longer: lives in Porto (since Jun 1, 2025)". The relation rows (written by sleep)
// carry the edge as it was and became; the other end is named when the panel knows its name (its
// connections list), and left out otherwise: never an id.
import type { EntityChange, EntityDetail } from '../../../shared/api.js';
import { dayOf } from '../../stores/graph.js';

export interface HistoryWords {
  t: (key: string, options?: Record<string, unknown>) => string;
  /** A relation in the UI language (useRelationLabel). */
  relationLabel: (relation: string) => string;
  /** A calendar day (YYYY-MM-DD) in words (useDayFormat). */
  day: (day: string) => string;
}

interface HistoryEdge {
  id: number | null;
  source: number;
  target: number;
  relation: string;
  validTo: string | null;
}

const asRecord = (v: unknown): Record<string, unknown> | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null);

/** The edge a relation row is about: as it became (after), else as it was (before). */
function edgeOf(c: Pick<EntityChange, 'before' | 'after'>): HistoryEdge | null {
  for (const side of [c.after, c.before]) {
    const e = asRecord(asRecord(side)?.edge);
    if (!e) continue;
    const { id, source, target, relation, validTo } = e;
    if (typeof source !== 'number' || typeof target !== 'number' || typeof relation !== 'string' || !relation) continue;
    return { id: typeof id === 'number' ? id : null, source, target, relation, validTo: typeof validTo === 'string' ? validTo : null };
  }
  return null;
}

/** "lives in Lisbon" from Ana's side, "Ana lives in Lisbon" from Lisbon's; without a name it knows no name for. */
function edgeWords(edge: HistoryEdge, detail: Pick<EntityDetail, 'entity' | 'relations'>, words: HistoryWords): string {
  const { t, relationLabel } = words;
  const self = detail.entity;
  const relation = relationLabel(edge.relation);
  const outgoing = edge.source === self.id;
  const otherId = outgoing ? edge.target : edge.source;
  const known = (edge.id !== null && detail.relations.find((r) => r.id === edge.id)) || detail.relations.find((r) => r.other.id === otherId);
  const name = known && known.other.id === otherId ? known.other.name : null;
  if (outgoing) return name ? t('graph.history.edgeTo', { relation, name }) : relation;
  if (edge.target === self.id)
    return name ? t('graph.history.edgeFrom', { name, relation, self: self.name }) : t('graph.history.edgeFromUnknown', { relation, self: self.name });
  // Neither end is this one (an edge that moved over in a merge): the relation alone.
  return relation;
}

export function historyText(c: EntityChange, detail: Pick<EntityDetail, 'entity' | 'relations'>, words: HistoryWords): string {
  const { t, day } = words;
  const before = asRecord(c.before);
  const after = asRecord(c.after);
  if (c.action === 'rename' && typeof before?.name === 'string') return t('graph.history.renamedFrom', { name: before.name });
  if (c.action === 'alias' && typeof after?.alias === 'string') return t('graph.history.aliasNamed', { alias: after.alias });
  if (c.action === 'relate' || c.action === 'strengthen' || c.action === 'close') {
    const edge = edgeOf(c);
    if (edge) {
      const what = edgeWords(edge, detail, words);
      if (c.action === 'close') {
        const since = dayOf(edge.validTo);
        return since ? t('graph.history.closeSince', { what, date: day(since) }) : t('graph.history.closeWhat', { what });
      }
      return t(c.action === 'relate' ? 'graph.history.relateWhat' : 'graph.history.strengthenWhat', { what });
    }
  }
  return t(`graph.history.${c.action}`);
}
