// Storing Anima's own archive (read by anima-archive.ts): everything in ONE transaction — the
// conversations and their messages (every version), memories with their journal and citations, the
// self layer, the diary, the mood days, the entity graph, the settings and the model connections
// (never a key: an archive holds none). An error or a cancel anywhere rolls it all back: an archive is
// one person's data, and half of it would be worse than none. Each row goes through the room that
// owns its table (`<room>/archive-restore.ts`), many rows per statement.
//
// Ids: into a folder with nothing in it, every row keeps its id (messages their seq too), so exporting
// again gives the same anima.json. Into a folder with data, what is already here is skipped and
// counted — a conversation or message by its id (UUIDs), a memory, journal entry, diary block or
// relation by its id and the moment it was made, an entity by its kind and name, a mood day by its
// day, a setting by its key, a self block the person wrote here — and a numbered row whose number is
// taken here by something else gets the next free one, with every reference to it rewritten
// (supersedes, journal, citations and [[anima:N]] markers in messages, evidence, profiles, and the
// forgets a diary block, a rolling summary or a message is set aside on behalf of). Messages then take
// the next seqs here, and a rolling summary's end (its seq) follows the message it ended at.
//
// Left as the export left it: the sleep cycle's bookkeeping (a diary block's run is not in an
// archive, so `run_id` is empty), entity mentions and vectors (the indexer and the embedder make
// them again from the text), and the `vault` setting (a folder on the machine the archive came from).
import type { Transaction } from '../db/database.js';
import { ApiError, IMPORT_ARCHIVE_PARTS, type ImportArchivePart } from '../../shared/api.js';
import { restoreSelfBlocks, selfBlocksHere } from '../companion/archive-restore.js';
import {
  advanceMessageSeq,
  anyMessages,
  existingConversationIds,
  existingMessageIds,
  restoreConversations,
  restoreMessages,
  restoreParents,
  restoreReplacedBy,
  restoreSummarySeqs,
  suspendMessageSearchIndexes,
} from '../conversations/archive-restore.js';
import type { Database } from '../db/open.js';
import {
  entitiesHere,
  edgeIdCeiling,
  edgesHere,
  restoreEntities,
  restoreEntityAliases,
  restoreEntityEdges,
  restoreFixedEntities,
} from '../graph/archive-restore.js';
import {
  advanceMemoryIds,
  memoriesHere,
  memoryChangeIdsHere,
  memoryIdCeilings,
  restoreMemories,
  restoreMemoryChanges,
  restoreMemoryReferences,
  restoreSupersededBy,
  restoreUndoneBy,
} from '../memory/archive-restore.js';
import { standingForgetIds } from '../memory/standing-forgets.js';
import { providersHere, restoreProviders } from '../providers/archive-restore.js';
import { settingKeysHere } from '../settings/archive-restore.js';
import type { SettingsStore } from '../settings/settings.js';
import { diaryBlocksHere, diaryIdCeiling, moodDaysHere, restoreDiaryBlocks, restoreMoodDays } from '../sleep/archive-restore.js';
import type { AnimaArchive, ArchiveRow } from './anima-archive.js';

type Tx = Pick<Transaction, 'query'>;

/** Messages per INSERT statement (measured with bench:import: larger batches gain nothing). */
export const RESTORE_BATCH_ROWS = 2000;
/** From this many messages into a folder with none, their search indexes are built once at the end instead of row by row. */
export const SUSPEND_INDEXES_FROM = 5000;

/** The parts of an archive a summary counts (the API's list). */
export type ArchivePart = ImportArchivePart;
export type ArchiveCounts = Record<ArchivePart, { total: number; already: number }>;

/** A restore's progress, in the words of any import's (ImportProgress): conversations gone through, messages and earlier versions written. */
export interface ArchiveProgress {
  total: number;
  done: number;
  imported: number;
  already: number;
  inTrash: number;
  messages: number;
  versions: number;
}

export interface RestoreDeps {
  db: Database;
  /** The settings room (its cache forgets what it read, so the restored settings are seen). */
  settings: Pick<SettingsStore, 'restoreMissing'>;
  /** The sleep room's mark (markImportedHistoryRead): restored conversations are history its steps never read again. */
  markRead: (tx: Transaction, conversationId: string, lastSeq: number) => Promise<void>;
}

export interface RestoreOptions {
  onProgress?: (progress: ArchiveProgress) => void;
  /** Checked between batches; a cancel rolls everything back. */
  signal?: AbortSignal;
  /** Messages from which the search indexes are built at the end (default SUSPEND_INDEXES_FROM; tests lower it). */
  suspendIndexesFrom?: number;
}

export interface RestoreResult extends ArchiveProgress {
  /** Rows written and skipped per part. */
  counts: ArchiveCounts;
  /** Ids of the messages restored that are not earlier versions (the graph and the embedder are told of them). */
  messageIds: string[];
}

const num = (v: unknown) => Number(v);
const str = (v: unknown) => String(v);
/** A column that may be empty (or missing from an older archive): null then. */
const seqOrNull = (v: unknown) => (v === null || v === undefined ? null : num(v));

/** What is here already and the id every numbered row will have: the reads a preview and a restore share. */
interface Plan {
  /** No message here: the archive's seq are kept. */
  keepSeq: boolean;
  /** No graph here beyond the companion's and the person's own nodes: those take the archive's names. */
  freshGraph: boolean;
  conversationsHere: Set<string>;
  /** archive memory id → id here, and the memories already here (skipped). */
  memoryIds: Map<number, number>;
  memoriesAlready: Set<number>;
  changeIds: Map<number, number>;
  /**
   * The archive's forgets → the forgets here a row set aside on their behalf waits for: a restored
   * forget's id here, or, for a forget of a memory here already (its journal is not restored), the
   * forget that stands here for that memory. One with neither is left out: the memory here is not forgotten.
   */
  forgetIds: Map<number, number>;
  diaryIds: Map<number, number>;
  diaryAlready: Set<number>;
  entityIds: Map<number, number>;
  entitiesAlready: Set<number>;
  edgeIds: Map<number, number>;
  edgesAlready: Set<number>;
}

/** Ids for numbered rows: the archive's own where it is free here, else the next past everything. */
function numbering(rows: ArchiveRow[], here: Map<number, boolean>, ceiling: number): { ids: Map<number, number>; already: Set<number> } {
  const ids = new Map<number, number>();
  const already = new Set<number>();
  let next = Math.max(ceiling, ...rows.map((r) => num(r.id)), 0);
  for (const r of rows) {
    const id = num(r.id);
    const same = here.get(id);
    if (same === true) {
      ids.set(id, id);
      already.add(id);
    } else ids.set(id, same === false ? ++next : id);
  }
  return { ids, already };
}

const stamp = (rows: ArchiveRow[]) => rows.map((r) => ({ id: num(r.id), created_at: str(r.created_at) }));

async function plan(tx: Tx, archive: AnimaArchive): Promise<Plan> {
  const s = archive.sections;
  const conversationsHere = await existingConversationIds(
    tx,
    s.conversations.map((c) => str(c.id)),
  );
  const ceilings = await memoryIdCeilings(tx);
  const memories = numbering(s.memories, await memoriesHere(tx, stamp(s.memories)), ceilings.memories);
  // A memory already here keeps its journal as it is here; the others' entries keep their ids where free.
  const changeRows = s.memory_changes.filter((c) => !memories.already.has(num(c.memory_id)));
  const takenChanges = await memoryChangeIdsHere(
    tx,
    changeRows.map((c) => num(c.id)),
  );
  const changes = numbering(changeRows, new Map([...takenChanges].map((id) => [id, false])), ceilings.changes);
  const forgetsOfMemoriesHere = s.memory_changes.filter((c) => c.action === 'forget' && memories.already.has(num(c.memory_id)));
  const standingHere = await standingForgetIds(tx, [...new Set(forgetsOfMemoriesHere.map((c) => num(c.memory_id)))]);
  const forgetIds = new Map(changes.ids);
  for (const c of forgetsOfMemoriesHere) {
    const here = standingHere.get(num(c.memory_id));
    if (here !== undefined) forgetIds.set(num(c.id), here);
  }
  const diary = numbering(s.diary_blocks, await diaryBlocksHere(tx, stamp(s.diary_blocks)), await diaryIdCeiling(tx));
  const edges = numbering(s.entity_edges, await edgesHere(tx, stamp(s.entity_edges)), await edgeIdCeiling(tx));

  // Entities: the two fixed nodes by kind; the others by kind and name among the live ones here, else by id.
  const here = await entitiesHere(tx);
  const freshGraph = here.every((e) => e.kind === 'self' || e.kind === 'user');
  const byName = new Map(here.filter((e) => e.status !== 'merged').map((e) => [`${e.kind}\u0000${e.name_key}`, e.id]));
  const fixed = new Map(here.filter((e) => e.kind === 'self' || e.kind === 'user').map((e) => [e.kind, e.id]));
  const byId = new Map(here.map((e) => [e.id, e]));
  const entityIds = new Map<number, number>();
  const entitiesAlready = new Set<number>();
  let next = Math.max(0, ...here.map((e) => e.id), ...s.entities.map((e) => num(e.id)));
  for (const e of s.entities) {
    const id = num(e.id);
    const kind = str(e.kind);
    const mine = fixed.get(kind) ?? (e.status !== 'merged' ? byName.get(`${kind}\u0000${str(e.name_key)}`) : undefined);
    if (mine !== undefined) {
      entityIds.set(id, mine);
      entitiesAlready.add(id);
      continue;
    }
    const taken = byId.get(id);
    if (taken && Date.parse(taken.created_at) === Date.parse(str(e.created_at)) && taken.kind === kind) {
      entityIds.set(id, id);
      entitiesAlready.add(id);
    } else entityIds.set(id, taken ? ++next : id);
  }
  return {
    keepSeq: !(await anyMessages(tx)),
    freshGraph,
    conversationsHere,
    memoryIds: memories.ids,
    memoriesAlready: memories.already,
    changeIds: changes.ids,
    forgetIds,
    diaryIds: diary.ids,
    diaryAlready: diary.already,
    entityIds,
    entitiesAlready,
    edgeIds: edges.ids,
    edgesAlready: edges.already,
  };
}

function zeroCounts(): ArchiveCounts {
  return Object.fromEntries(IMPORT_ARCHIVE_PARTS.map((p) => [p, { total: 0, already: 0 }])) as ArchiveCounts;
}

/** What an archive would bring in and what of it is here already (nothing is written). */
export async function archiveCounts(db: Database, archive: AnimaArchive): Promise<ArchiveCounts> {
  const s = archive.sections;
  const p = await plan(db, archive);
  const counts = zeroCounts();
  const set = (part: ArchivePart, total: number, already: number) => (counts[part] = { total, already });
  set('conversations', s.conversations.length, s.conversations.filter((c) => p.conversationsHere.has(str(c.id))).length);
  const messagesHere = await existingMessageIds(
    db,
    s.messages.map((m) => str(m.id)),
  );
  set('messages', s.messages.length, s.messages.filter((m) => p.conversationsHere.has(str(m.conversation_id)) || messagesHere.has(str(m.id))).length);
  set('memories', s.memories.length, p.memoriesAlready.size);
  set('memoryChanges', s.memory_changes.length, s.memory_changes.length - p.changeIds.size);
  // A citation, an alias: here already when what it belongs to is (it is then written only if missing).
  set('references', s.memory_references.length, s.memory_references.filter((r) => p.memoriesAlready.has(num(r.memory_id))).length);
  set('diaryBlocks', s.diary_blocks.length, p.diaryAlready.size);
  set(
    'moodDays',
    s.mood_days.length,
    await moodDaysHere(
      db,
      s.mood_days.map((m) => str(m.day)),
    ),
  );
  set('entities', s.entities.length, p.entitiesAlready.size);
  const fixedKinds = new Set(s.entities.filter((e) => e.kind === 'self' || e.kind === 'user').map((e) => num(e.id)));
  set(
    'aliases',
    s.entity_aliases.length,
    s.entity_aliases.filter((a) => p.entitiesAlready.has(num(a.entity_id)) && !(p.freshGraph && fixedKinds.has(num(a.entity_id)))).length,
  );
  set('relations', s.entity_edges.length, p.edgesAlready.size);
  set('selfBlocks', s.self_blocks.length, await selfBlocksHere(db, s.self_blocks));
  // `vault` never comes with an archive (SettingsStore.restoreMissing says why): it is not counted.
  const settings = s.settings.filter((x) => x.key !== 'vault');
  set(
    'settings',
    settings.length,
    await settingKeysHere(
      db,
      settings.map((x) => str(x.key)),
    ),
  );
  set(
    'providers',
    s.providers.length,
    await providersHere(
      db,
      s.providers.map((x) => str(x.id)),
    ),
  );
  return counts;
}

/** `[[anima:N]]` markers rewritten where memory N took another id here. */
function rewriteMarkers(text: string, ids: Map<number, number>): string {
  return text.replace(/\[\[anima:(\d+)\]\]/g, (whole, n: string) => {
    const to = ids.get(Number(n));
    return to === undefined || to === Number(n) ? whole : `[[anima:${to}]]`;
  });
}

const mapIds = (value: unknown, ids: Map<number, number>) => (Array.isArray(value) ? value.map((v) => ids.get(num(v)) ?? num(v)) : value);

/**
 * The forgets a row is set aside on behalf of (memory journal ids: a diary block's `forgotten_by`, a
 * rolling summary's `rolling_summary_forgotten_by`, a message's `recall_hidden_by`) under the ids of
 * the forgets here that stand for them (Plan.forgetIds), so that undoing the forget here brings the row
 * back and undoing one of this folder's own that holds the archive's old number does not. NULL when none
 * is left, as after the last one is undone.
 */
const mapForgets = (value: unknown, forgetIds: Map<number, number>) => {
  if (!Array.isArray(value)) return value;
  const here = [...new Set(value.flatMap((v) => forgetIds.get(num(v)) ?? []))];
  return here.length ? here : null;
};

/**
 * When a row was set aside on behalf of forgets (`before`) and none of them stands here (`after` is
 * NULL: each was of a memory here already that is not forgotten here), the memory here decides: the row
 * is shown (its hidden mark NULL). A row hidden otherwise (by the person: no forgets) keeps its mark.
 * A rolling summary set aside stays aside: the next summary written replaces it.
 */
const hiddenMark = (before: unknown, after: unknown, mark: unknown) => (Array.isArray(before) && before.length > 0 && after === null ? null : mark);

/**
 * Where a rolling summary that ended at the archive's seq `archiveSeq` ends among its conversation's
 * restored messages (`restored`: archive seq and seq here of each, in the archive's order): at the seq
 * here of the last one at or before it. That is the message it ended at; when that one did not come
 * along (not in the archive, or its id is here already), the ones restored before it are still exactly
 * the turns it covers, in the same order here. 0 when none of them came along: the summary covers no
 * turn here, and any later end would claim turns restored after it that it never saw — a request
 * would leave them out unsummarised — whereas at 0 the next overflow has the nap summarise from the
 * first turn.
 */
function seqHere(archiveSeq: number, restored: readonly (readonly [archive: number, here: number])[]): number {
  let here = 0;
  for (const [archive, seq] of restored) {
    if (archive > archiveSeq) break;
    here = seq;
  }
  return here;
}

/** Stores an archive in one transaction. Throws (and nothing is stored) on any error, or `cancelled` when the signal fired. */
export async function restoreArchive(archive: AnimaArchive, deps: RestoreDeps, opts: RestoreOptions = {}): Promise<RestoreResult> {
  const s = archive.sections;
  const progress: ArchiveProgress = { total: s.conversations.length, done: 0, imported: 0, already: 0, inTrash: 0, messages: 0, versions: 0 };
  const report = () => opts.onProgress?.({ ...progress });
  const checkCancelled = () => {
    if (opts.signal?.aborted) throw new ApiError('cancelled', 'The import was stopped; nothing of the archive was stored.');
  };
  report();
  const counts = zeroCounts();
  const messageIds: string[] = [];
  await deps.db.transaction(async (tx) => {
    const p = await plan(tx, archive);
    const remapped = [...p.memoryIds].some(([a, b]) => a !== b);
    const memoryId = (v: unknown) => (v === null || v === undefined ? null : (p.memoryIds.get(num(v)) ?? num(v)));

    // Settings, connections, the self layer.
    const settingsWritten = await deps.settings.restoreMissing(tx, s.settings as { key: unknown; value: unknown }[]);
    counts.settings = { total: s.settings.length, already: s.settings.length - settingsWritten.length };
    const providersWritten = await restoreProviders(tx, s.providers);
    counts.providers = { total: s.providers.length, already: s.providers.length - providersWritten.length };
    const selfWritten = await restoreSelfBlocks(tx, s.self_blocks);
    counts.selfBlocks = { total: s.self_blocks.length, already: s.self_blocks.length - selfWritten.length };

    // Conversations, then their messages a batch at a time, in seq order.
    const newConversations = s.conversations
      .filter((c) => !p.conversationsHere.has(str(c.id)))
      .map((c): ArchiveRow => ({ ...c, rolling_summary_forgotten_by: mapForgets(c.rolling_summary_forgotten_by, p.forgetIds) }));
    for (let i = 0; i < newConversations.length; i += RESTORE_BATCH_ROWS) await restoreConversations(tx, newConversations.slice(i, i + RESTORE_BATCH_ROWS));
    counts.conversations = { total: s.conversations.length, already: s.conversations.length - newConversations.length };
    progress.already = counts.conversations.already;
    const isNew = new Set(newConversations.map((c) => str(c.id)));
    const messages = s.messages.filter((m) => isNew.has(str(m.conversation_id))).sort((a, b) => num(a.seq) - num(b.seq));
    const lastSeq = new Map<string, number>();
    // Into a folder with messages, the restored ones take the next seqs here and a rolling summary's end
    // (live or set aside) follows them: the archive seq and the seq here of each message of a conversation
    // with a summary (seqHere). Into one with none every seq is kept, the ends with them.
    const summaryEnds = new Map(
      p.keepSeq
        ? []
        : newConversations.flatMap((c) => {
            const live = seqOrNull(c.rolling_summary_seq) ?? 0;
            const setAside = seqOrNull(c.rolling_summary_set_aside_seq);
            return live || setAside !== null ? [[str(c.id), { live, setAside, restored: [] as [number, number][] }] as const] : [];
          }),
    );
    const perConversation = new Map<string, number>();
    for (const m of messages) perConversation.set(str(m.conversation_id), (perConversation.get(str(m.conversation_id)) ?? 0) + 1);
    const left = new Map(perConversation);
    const replaced: { id: string; replaced_by: string }[] = [];
    const written = new Set<string>();
    const rebuild = p.keepSeq && messages.length >= (opts.suspendIndexesFrom ?? SUSPEND_INDEXES_FROM) ? await suspendMessageSearchIndexes(tx) : null;
    for (let i = 0; i < messages.length; i += RESTORE_BATCH_ROWS) {
      checkCancelled();
      const batch = messages.slice(i, i + RESTORE_BATCH_ROWS).map((m) => {
        const hiddenBy = mapForgets(m.recall_hidden_by, p.forgetIds);
        const row: ArchiveRow = { ...m, recall_hidden_by: hiddenBy, recall_hidden_at: hiddenMark(m.recall_hidden_by, hiddenBy, m.recall_hidden_at) };
        return remapped
          ? {
              ...row,
              content: rewriteMarkers(str(m.content), p.memoryIds),
              injected_memory_ids: mapIds(m.injected_memory_ids, p.memoryIds),
              shown_memory_ids: mapIds(m.shown_memory_ids, p.memoryIds),
            }
          : row;
      });
      const seqs = await restoreMessages(tx, batch, p.keepSeq);
      for (const m of batch) {
        const id = str(m.id);
        const seq = seqs.get(id);
        const conversation = str(m.conversation_id);
        if (seq !== undefined) {
          written.add(id);
          lastSeq.set(conversation, Math.max(lastSeq.get(conversation) ?? 0, seq));
          summaryEnds.get(conversation)?.restored.push([num(m.seq), seq]);
          if (typeof m.replaced_by === 'string') {
            replaced.push({ id, replaced_by: m.replaced_by });
            progress.versions++;
          } else {
            progress.messages++;
            messageIds.push(id);
          }
        }
        const n = (left.get(conversation) ?? 1) - 1;
        left.set(conversation, n);
        if (n === 0) {
          progress.imported++;
          progress.done++;
        }
      }
      report();
      // Progress events go out between batches (PGlite answers in microtasks).
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await rebuild?.();
    await restoreReplacedBy(tx, replaced);
    await restoreParents(tx, messages);
    await restoreSummarySeqs(
      tx,
      [...summaryEnds].map(([id, end]) => ({
        id,
        rolling_summary_seq: seqHere(end.live, end.restored),
        rolling_summary_set_aside_seq: end.setAside === null ? null : seqHere(end.setAside, end.restored),
      })),
    );
    if (p.keepSeq && messages.length) await advanceMessageSeq(tx);
    for (const [conversation, seq] of lastSeq) await deps.markRead(tx, conversation, seq);
    // Conversations without messages count as done too.
    progress.imported += newConversations.filter((c) => !perConversation.has(str(c.id))).length;
    progress.done = progress.total;
    counts.messages = { total: s.messages.length, already: s.messages.length - written.size };
    checkCancelled();

    // Memories, their journal, their citations.
    const newMemories = s.memories.filter((m) => !p.memoriesAlready.has(num(m.id)));
    const memoryRows = newMemories.map((m) => ({ ...m, id: memoryId(m.id), content: remapped ? rewriteMarkers(str(m.content), p.memoryIds) : m.content }));
    let memoriesWritten = 0;
    for (let i = 0; i < memoryRows.length; i += RESTORE_BATCH_ROWS) memoriesWritten += await restoreMemories(tx, memoryRows.slice(i, i + RESTORE_BATCH_ROWS));
    await restoreSupersededBy(
      tx,
      newMemories
        .filter((m) => m.superseded_by !== null && m.superseded_by !== undefined)
        .map((m) => ({ id: memoryId(m.id)!, superseded_by: memoryId(m.superseded_by)! })),
    );
    counts.memories = { total: s.memories.length, already: s.memories.length - memoriesWritten };
    const changeId = (v: unknown) => (v === null || v === undefined ? null : (p.changeIds.get(num(v)) ?? num(v)));
    const changeRows = s.memory_changes.filter((c) => p.changeIds.has(num(c.id)));
    let changesWritten = 0;
    for (let i = 0; i < changeRows.length; i += RESTORE_BATCH_ROWS) {
      const batch = changeRows.slice(i, i + RESTORE_BATCH_ROWS).map((c) => ({ ...c, id: changeId(c.id), memory_id: memoryId(c.memory_id) }));
      changesWritten += await restoreMemoryChanges(tx, batch);
    }
    await restoreUndoneBy(
      tx,
      changeRows.filter((c) => c.undone_by !== null && c.undone_by !== undefined).map((c) => ({ id: changeId(c.id)!, undone_by: changeId(c.undone_by)! })),
    );
    counts.memoryChanges = { total: s.memory_changes.length, already: s.memory_changes.length - changesWritten };
    const refMessages = new Set([
      ...written,
      ...(await existingMessageIds(
        tx,
        [...new Set(s.memory_references.map((r) => str(r.message_id)))].filter((id) => !written.has(id)),
      )),
    ]);
    const refs = s.memory_references.filter((r) => refMessages.has(str(r.message_id))).map((r) => ({ ...r, memory_id: memoryId(r.memory_id) }));
    const refsWritten = await restoreMemoryReferences(tx, refs);
    counts.references = { total: s.memory_references.length, already: s.memory_references.length - refsWritten };
    await advanceMemoryIds(tx);
    checkCancelled();

    // The diary and the mood days. A block about a conversation the archive left out (it was in the trash) keeps no link to it.
    const conversationsKnown = new Set([...s.conversations.map((c) => str(c.id))]);
    const strayConversations = [
      ...new Set(s.diary_blocks.map((d) => d.conversation_id).filter((c): c is string => typeof c === 'string' && !conversationsKnown.has(c))),
    ];
    const strayHere = await existingConversationIds(tx, strayConversations);
    const diaryRows = s.diary_blocks
      .filter((d) => !p.diaryAlready.has(num(d.id)))
      .map((d) => {
        const forgottenBy = mapForgets(d.forgotten_by, p.forgetIds);
        return {
          ...d,
          id: p.diaryIds.get(num(d.id)),
          forgotten_by: forgottenBy,
          hidden_at: hiddenMark(d.forgotten_by, forgottenBy, d.hidden_at),
          conversation_id:
            typeof d.conversation_id === 'string' && (conversationsKnown.has(d.conversation_id) || strayHere.has(d.conversation_id)) ? d.conversation_id : null,
        };
      });
    let diaryWritten = 0;
    for (let i = 0; i < diaryRows.length; i += RESTORE_BATCH_ROWS) diaryWritten += await restoreDiaryBlocks(tx, diaryRows.slice(i, i + RESTORE_BATCH_ROWS));
    counts.diaryBlocks = { total: s.diary_blocks.length, already: s.diary_blocks.length - diaryWritten };
    const moodWritten = await restoreMoodDays(tx, s.mood_days);
    counts.moodDays = { total: s.mood_days.length, already: s.mood_days.length - moodWritten };

    // The entity graph.
    const entityId = (v: unknown) => (v === null || v === undefined ? null : (p.entityIds.get(num(v)) ?? num(v)));
    if (p.freshGraph)
      await restoreFixedEntities(
        tx,
        s.entities.map((e) => ({ ...e, profile_memory_id: memoryId(e.profile_memory_id) })),
      );
    const entityRows = s.entities
      .filter((e) => !p.entitiesAlready.has(num(e.id)))
      .map((e) => ({ ...e, id: entityId(e.id), merged_into: entityId(e.merged_into), profile_memory_id: memoryId(e.profile_memory_id) }));
    const entitiesWritten = await restoreEntities(tx, entityRows);
    counts.entities = { total: s.entities.length, already: s.entities.length - entitiesWritten };
    const aliasesWritten = await restoreEntityAliases(
      tx,
      s.entity_aliases.map((a) => ({ ...a, entity_id: entityId(a.entity_id) })),
    );
    counts.aliases = { total: s.entity_aliases.length, already: s.entity_aliases.length - aliasesWritten };
    const edgeRows = s.entity_edges
      .filter((e) => !p.edgesAlready.has(num(e.id)))
      .map((e) => {
        let source = entityId(e.source_id)!;
        let target = entityId(e.target_id)!;
        // A co-mention is stored once, from the smaller id: renumbering may turn a pair around.
        if (e.relation === 'co_mention' && source > target) [source, target] = [target, source];
        return { ...e, id: p.edgeIds.get(num(e.id)), source_id: source, target_id: target, evidence_memory_ids: mapIds(e.evidence_memory_ids, p.memoryIds) };
      })
      .filter((e) => e.source_id !== e.target_id);
    const edgesWritten = await restoreEntityEdges(tx, edgeRows);
    counts.relations = { total: s.entity_edges.length, already: s.entity_edges.length - edgesWritten };
    checkCancelled();
  });
  report();
  return { ...progress, counts, messageIds };
}
