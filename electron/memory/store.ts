// Semantic memory: the only code that writes the memories table. Every change — by the companion,
// the person, the sleep cycle or the graph — goes through here, is checked by the same guards, and
// is written to the change journal (memory_changes) in the same transaction, so undo, the morning
// digest and merges all read one history. The row mapping and the SQL helpers the writes share are
// in rows.ts, the guards in write-checks.ts, the named reads other rooms make in reads.ts.
import { randomUUID } from 'node:crypto';
import type { Transaction } from '../db/database.js';
import { ApiError, type Memory, type MemoryActor, type MemoryChange, type MemorySource, type MemoryType, type SaveMemoryResult } from '../../shared/api.js';
import type { Database } from '../db/open.js';
import { VectorSlot } from '../embed/active.js';
import { compareFacts } from './same-fact.js';
import { sameSlot } from './same-slot.js';
import { probe, type Match } from './probe.js';
import { derivedRestatements } from './restatements.js';
import { encodeReason } from './reasons.js';
import { duplicateProbes, type ProbeVector } from '../embed/duplicates.js';
import * as reads from './reads.js';
import type { ChangeWithText, MemoryFilter, MemoryOutline } from './reads.js';
import {
  COLUMNS,
  applyFields,
  assertNotChangedSince,
  diff,
  findMemory,
  journalMark,
  nextPinOrder,
  pinnedActive,
  requireActive,
  requireChange,
  requireMemory,
  snapshot,
  toChange,
  toMemory,
  union,
  type ChangeRow,
  type Fields,
  type MemoryRow,
  type Queryable,
} from './rows.js';
import { segmentForIndex } from './segment.js';
import { checkContent, checkOwner, checkTime, checkType, checkValidity, checkWrite, invalid, type CheckedWrite, type MemoryWrite } from './write-checks.js';

export type { ChangeWithText, MemoryFilter, MemoryOutline } from './reads.js';
export type { MemoryWrite } from './write-checks.js';
export { namesWhose } from './write-checks.js';
export { NEAR_DUPLICATE_SIMILARITY } from './probe.js';

type Log = (level: 'info' | 'warn' | 'error', message: string) => void;

/** A save checked and probed ahead of its batch (MemoryStore.prepareCreates). */
export interface PreparedCreate {
  write: CheckedWrite;
  /** The active memory it updates (the same fact), or null. */
  duplicateId: number | null;
  /** What the probe found: the same fact, a slot it gives a new value, a forgotten memory it would bring back, or nothing. */
  match: Match;
  /** Repeats an earlier save of the same list: its duplicate is that one, known only once written. */
  probeAgain: boolean;
  /** Its vector for the near-duplicate check by meaning, when a model is set (a probe again inside the batch uses it). */
  vector?: ProbeVector | null;
}

export interface PreparedCreates {
  /** The journal's last id when the probes began. */
  mark: number;
  items: (PreparedCreate | ApiError)[];
}

/** What MemoryStore.batch hands its callback: guarded writes inside one transaction. */
export interface MemoryBatch {
  tx: Transaction;
  /** Like MemoryStore.create (near-duplicates update instead of adding). */
  create(w: MemoryWrite): Promise<SaveMemoryResult>;
  /** A save prepared by prepareCreates: no probe inside the transaction unless memory changed since. */
  createPrepared(p: PreparedCreate): Promise<SaveMemoryResult>;
  /** `olderId` becomes superseded by the existing `newerId`; both stay, linked. */
  link(olderId: number, newerId: number, actor: MemoryActor, batchId?: string, reason?: string): Promise<SaveMemoryResult>;
  /** Closes a memory's valid time (expired once that time has passed). */
  expire(id: number, validTo: string, actor: MemoryActor, batchId?: string, reason?: string): Promise<SaveMemoryResult>;
  /** Like MemoryStore.supersede: a new memory replaces an active one (no near-duplicate probe), in the batch's transaction. */
  supersede(oldId: number, newWrite: MemoryWrite, actor: MemoryActor): Promise<SaveMemoryResult>;
  get(id: number): Promise<Memory | null>;
  /** Like MemoryStore.forget, in the batch's transaction (what else the forget takes along commits with it). */
  forget(id: number, actor: MemoryActor, reason?: string): Promise<SaveMemoryResult>;
  /** Like MemoryStore.undo, in the batch's transaction; `undone` lists every change taken back (its batch's too). */
  undo(changeId: number, actor: MemoryActor): Promise<{ memory: Memory; undone: number[] }>;
}

/**
 * What else a forget takes along, in the forget's transaction, and gives back when the forget is
 * undone (in the undo's transaction) — for rows other rooms derived from the fact (the diary's
 * restatements: electron/forgetting/diary.ts).
 */
export interface ForgetFollower {
  /** `memory` (as it was before) was forgotten by journal entry `changeId`. */
  forgotten(tx: Transaction, memory: Memory, changeId: number): Promise<void>;
  /** These forgets (journal ids) were undone. */
  undone(tx: Transaction, forgetChangeIds: number[]): Promise<void>;
}

export interface MemoryPatch {
  type?: MemoryType;
  content?: string;
  validFrom?: string | null;
  validTo?: string | null;
}

export class MemoryStore {
  constructor(
    private readonly db: Database,
    private readonly onChange: (change: MemoryChange) => void = () => {},
    private readonly log: Log = () => {},
    /** The embedding model in use, for the near-duplicate check by meaning; empty: by words only. */
    private readonly vectors: VectorSlot = new VectorSlot(),
  ) {}

  private forgetFollowers: ForgetFollower[] = [];

  /** Every forget from now on, whoever forgets (the person, the companion on their word, the vault), takes `follower` along. */
  followForgets(follower: ForgetFollower): void {
    this.forgetFollowers.push(follower);
  }

  async create(w: MemoryWrite): Promise<SaveMemoryResult> {
    const write = checkWrite(w);
    // Embedded before the transaction: no model call while the database is held.
    const [vector] = write.keepApart ? [null] : await duplicateProbes(this.vectors.get(), [write.content]);
    return this.write((tx, journal) => this.createIn(tx, journal, write, undefined, vector));
  }

  /**
   * Several changes in one transaction, for the sleep cycle: its memories, its diary rows and its
   * watermark commit together or not at all. `fn` gets the transaction for its own rows. A write
   * refused by a guard (a secret, an unknown type) throws ApiError before touching the database, so
   * the caller can skip that one item and go on; any database error rolls the whole batch back.
   */
  async batch<T>(fn: (b: MemoryBatch) => Promise<T>, prepared?: PreparedCreates): Promise<T> {
    return this.write(async (tx, journal) => {
      // The probes done ahead still hold if the journal has not moved since: every change to a
      // memory is journalled, so an unchanged journal means no memory changed.
      const probesHold = prepared !== undefined && (await journalMark(tx)) === prepared.mark;
      return fn({
        tx,
        create: (w) => this.createIn(tx, journal, checkWrite(w)),
        createPrepared: async (p) => {
          if (!probesHold || p.probeAgain) return this.createIn(tx, journal, p.write, undefined, p.vector);
          return this.createIn(tx, journal, p.write, p.match);
        },
        link: (olderId, newerId, actor, batchId, reason) => this.linkIn(tx, journal, olderId, newerId, actor, batchId, reason),
        expire: async (id, validTo, actor, batchId, reason) => {
          const current = await requireActive(tx, id, 'expired');
          const at = checkTime('validTo', validTo) ?? new Date().toISOString();
          checkValidity(current.validFrom, at);
          // Closing the valid time in the future keeps the memory active until then.
          const patch: Fields = Date.parse(at) <= Date.now() ? { status: 'expired', validTo: at } : { validTo: at };
          const { before, after } = diff(current, patch);
          const memory = await applyFields(tx, id, after);
          const change = await journal(tx, id, 'expire', actor, before, after, batchId, reason);
          return { memory, outcome: 'updated' as const, changeId: change.id };
        },
        supersede: (oldId, newWrite, actor) => this.supersedeIn(tx, journal, oldId, checkWrite(newWrite), newWrite.pinned, actor),
        get: (id) => findMemory(tx, id),
        forget: (id, actor, reason) => this.forgetIn(tx, journal, id, actor, reason),
        undo: (changeId, actor) => this.undoIn(tx, journal, changeId, actor),
      });
    });
  }

  /**
   * Checks a list of saves and looks up their near-duplicates now, outside any long transaction, so
   * a batch written later holds the database only for its inserts (chat writes wait behind a batch).
   * Each item is the prepared save, or the ApiError a guard raised for it. Two saves in the list that
   * are the same words are collapsed here (the later one updates the earlier), as saving them one by
   * one would.
   */
  async prepareCreates(writes: MemoryWrite[]): Promise<PreparedCreates> {
    const mark = await journalMark(this.db);
    const checked = writes.map((w) => {
      try {
        return checkWrite(w);
      } catch (err) {
        if (err instanceof ApiError) return err;
        throw err;
      }
    });
    // One model call for the list (none without a model), after the guards: a refused save is never embedded.
    const embeddable = checked.filter((c): c is CheckedWrite => !(c instanceof ApiError) && !c.keepApart);
    const probes = await duplicateProbes(
      this.vectors.get(),
      embeddable.map((c) => c.content),
    );
    const vectors = new Map(embeddable.map((c, i) => [c, probes[i] ?? null]));
    const items: (PreparedCreate | ApiError)[] = [];
    const earlier: CheckedWrite[] = [];
    for (const write of checked) {
      if (write instanceof ApiError) {
        items.push(write);
        continue;
      }
      // A restatement of an earlier save in this list is probed again inside the batch, where it finds that one.
      const repeat = earlier.some((e) => e.type === write.type && (compareFacts(e.content, write.content) === 'same' || sameSlot(e.content, write.content)));
      earlier.push(write);
      const vector = vectors.get(write) ?? null;
      const match: Match = repeat ? { kind: 'new' } : await this.db.transaction((tx) => probe(tx, write, vector));
      items.push({
        write: { ...write, segmented: segmentForIndex(write.content) },
        duplicateId: match.kind === 'same' ? match.memory.id : null,
        match,
        probeAgain: repeat,
        vector,
      });
    }
    return { mark, items };
  }

  private async createIn(tx: Transaction, journal: Journal, write: CheckedWrite, known?: Match, vector?: ProbeVector | null): Promise<SaveMemoryResult> {
    const match = known ?? (await probe(tx, write, vector));
    // A forgotten fact an automatic writer would bring back: skipped quietly, nothing written or journalled.
    if (match.kind === 'forgotten') return { memory: match.memory, outcome: 'skipped', skipped: 'forgotten', changeId: match.changeId };
    if (match.kind === 'slot') {
      // Probed ahead of the batch: the old one may have changed since (then this is a new memory).
      const old = known ? await findMemory(tx, match.memory.id) : match.memory;
      if (old?.status === 'active') {
        const reason = write.reason ?? encodeReason({ code: 'same_slot', memoryId: old.id });
        return this.supersedeIn(tx, journal, old.id, { ...write, reason }, write.pinned ? true : undefined, write.actor);
      }
    }
    const duplicate = match.kind === 'same' ? (known ? await findMemory(tx, match.memory.id) : match.memory) : null;
    if (!duplicate || duplicate.status !== 'active') {
      const memory = await this.insert(tx, write);
      const change = await journal(tx, memory.id, 'create', write.actor, null, snapshot(memory), write.batchId, write.reason);
      return { memory, outcome: 'created' as const, changeId: change.id };
    }
    const patch: Fields = {
      content: write.content,
      sourceMessageIds: union(duplicate.sourceMessageIds, write.sourceMessageIds),
      entityNames: union(duplicate.entityNames, write.entityNames),
    };
    if (write.validFrom !== undefined) patch.validFrom = write.validFrom;
    if (write.validTo !== undefined) patch.validTo = write.validTo;
    if (write.pinned && !duplicate.pinned) Object.assign(patch, { pinned: true, pinOrder: await nextPinOrder(tx) });
    const { before, after } = diff(duplicate, patch);
    // The journal always says what was saved again, even when the wording was identical.
    before.content = duplicate.content;
    after.content = write.content;
    const memory = await applyFields(tx, duplicate.id, patch);
    const reason = write.reason ?? encodeReason({ code: 'near_duplicate' });
    const change = await journal(tx, memory.id, 'update', write.actor, before, after, write.batchId, reason);
    return { memory, outcome: 'updated' as const, changeId: change.id };
  }

  /**
   * Marks an active memory as superseded by another existing one (deep sleep found that the newer
   * contradicts or replaces it). The older one's valid time closes where the newer one's starts.
   */
  private async linkIn(
    tx: Transaction,
    journal: Journal,
    olderId: number,
    newerId: number,
    actor: MemoryActor,
    batchId?: string,
    reason?: string,
  ): Promise<SaveMemoryResult> {
    if (olderId === newerId) invalid('older', 'A memory cannot supersede itself.');
    const older = await requireActive(tx, olderId, 'superseded');
    const newer = await requireActive(tx, newerId, 'the successor of another');
    // Never link into a loop: the newer one must not already lead back to the older one.
    const loop = await tx.query(
      `WITH RECURSIVE chain (id, depth) AS (
         SELECT id, 0 FROM memories WHERE id = $1
         UNION SELECT m.superseded_by, c.depth + 1 FROM memories m JOIN chain c ON m.id = c.id
          WHERE m.superseded_by IS NOT NULL AND c.depth < 1000)
       SELECT 1 FROM chain WHERE id = $2`,
      [newerId, olderId],
    );
    if (loop.rows.length) invalid('newer', `Memory ${newerId} already leads back to memory ${olderId}.`);
    const closesAt = newer.validFrom && (!older.validFrom || newer.validFrom >= older.validFrom) ? newer.validFrom : new Date().toISOString();
    const patch: Fields = { status: 'superseded', supersededBy: newerId, validTo: older.validTo && older.validTo < closesAt ? older.validTo : closesAt };
    const { before, after } = diff(older, patch);
    const memory = await applyFields(tx, olderId, after);
    const change = await journal(tx, olderId, 'supersede', actor, before, after, batchId, reason);
    return { memory, outcome: 'updated' as const, changeId: change.id };
  }

  async update(id: number, patch: MemoryPatch, actor: MemoryActor, reason?: string): Promise<SaveMemoryResult> {
    const fields: Fields = {};
    if (patch.type !== undefined) fields.type = checkType(patch.type);
    if (patch.content !== undefined) fields.content = checkContent(patch.content);
    if (patch.validFrom !== undefined) fields.validFrom = checkTime('validFrom', patch.validFrom);
    if (patch.validTo !== undefined) fields.validTo = checkTime('validTo', patch.validTo);
    return this.write(async (tx, journal) => {
      const current = await requireActive(tx, id, 'changed');
      const next = { ...current, ...fields };
      checkOwner(next.type, next.content);
      checkValidity(next.validFrom, next.validTo);
      // An edit that gives the same slot a new value ("lives in Brno" → "lives in Prague") is a new
      // fact: the old one is superseded, kept and linked, not rewritten. A wording fix stays an edit.
      if (fields.content !== undefined && sameSlot(current.content, fields.content)) {
        const lower = fields.content.toLowerCase();
        const write = checkWrite({
          type: next.type,
          content: fields.content,
          validFrom: fields.validFrom,
          validTo: fields.validTo,
          source: actor === 'person' ? 'user' : current.source,
          actor,
          sourceMessageIds: current.sourceMessageIds,
          entityNames: current.entityNames.filter((n) => lower.includes(n.toLowerCase())),
          reason: reason ?? encodeReason({ code: 'edited_new_value', memoryId: id }),
        });
        return this.supersedeIn(tx, journal, id, write, undefined, actor);
      }
      const { before, after } = diff(current, fields);
      if (Object.keys(after).length === 0) invalid('content', `Nothing to change: memory ${id} already says that.`);
      const memory = await applyFields(tx, id, fields);
      const change = await journal(tx, id, 'update', actor, before, after, undefined, reason);
      return { memory, outcome: 'updated' as const, changeId: change.id };
    });
  }

  /** Forgetting expires a memory (out of recall and the resident block); the row stays, and undo brings it back. */
  async forget(id: number, actor: MemoryActor, reason?: string): Promise<SaveMemoryResult> {
    return this.write((tx, journal) => this.forgetIn(tx, journal, id, actor, reason));
  }

  private async forgetIn(tx: Transaction, journal: Journal, id: number, actor: MemoryActor, reason?: string): Promise<SaveMemoryResult> {
    const current = await requireActive(tx, id, 'forgotten');
    const at = new Date().toISOString();
    // Deep sleep's texts from the same messages that say it again (a profile, a merge) go with it, in
    // one batch: the undo of the forget brings them back. Expired by the system, not forgotten, so a
    // profile written later from the facts that remain is not held back as a forgotten one.
    const restating = await derivedRestatements(tx, current);
    const batchId = restating.length ? randomUUID() : undefined;
    const { before, after } = diff(current, { status: 'expired', validTo: at });
    const memory = await applyFields(tx, id, after);
    const change = await journal(tx, id, 'forget', actor, before, after, batchId, reason);
    for (const other of restating) {
      const derived = diff(await requireMemory(tx, other), { status: 'expired', validTo: at });
      await applyFields(tx, other, derived.after);
      await journal(tx, other, 'expire', 'system', derived.before, derived.after, batchId, `said memory ${id} again, which was forgotten`);
    }
    for (const follower of this.forgetFollowers) await follower.forgotten(tx, current, change.id);
    return { memory, outcome: 'updated' as const, changeId: change.id };
  }

  async pin(id: number, pinned: boolean, actor: MemoryActor): Promise<SaveMemoryResult> {
    return this.write(async (tx, journal) => {
      const current = await requireActive(tx, id, pinned ? 'pinned' : 'unpinned');
      if (current.pinned === pinned) throw new ApiError('conflict', `Memory ${id} is already ${pinned ? 'pinned' : 'not pinned'}.`);
      const patch: Fields = pinned ? { pinned, pinOrder: await nextPinOrder(tx) } : { pinned, pinOrder: null };
      const { before, after } = diff(current, patch);
      const memory = await applyFields(tx, id, patch);
      const change = await journal(tx, id, pinned ? 'pin' : 'unpin', actor, before, after);
      return { memory, outcome: 'updated' as const, changeId: change.id };
    });
  }

  /**
   * Puts the given pinned memories first, in this order; pinned memories not named keep their
   * relative order after them. One journal entry per moved memory, all in one batch.
   */
  async reorderPins(ids: number[], actor: MemoryActor): Promise<Memory[]> {
    if (new Set(ids).size !== ids.length) invalid('ids', 'A memory appears twice in the new order.');
    return this.write(async (tx, journal) => {
      const pinned = await pinnedActive(tx);
      const byId = new Map(pinned.map((m) => [m.id, m]));
      const stranger = ids.find((id) => !byId.has(id));
      if (stranger !== undefined) invalid('ids', `Memory ${stranger} is not a pinned active memory.`);
      const order = [...ids.map((id) => byId.get(id)!), ...pinned.filter((m) => !ids.includes(m.id))];
      const batchId = randomUUID();
      const result: Memory[] = [];
      for (const [i, m] of order.entries()) {
        const { before, after } = diff(m, { pinOrder: i + 1 });
        if (Object.keys(after).length === 0) {
          result.push(m);
          continue;
        }
        result.push(await applyFields(tx, m.id, after, false));
        await journal(tx, m.id, 'reorder', actor, before, after, batchId);
      }
      return result;
    });
  }

  /**
   * Replaces an active memory with a new one, linking them (old.superseded_by = new). Both changes
   * share a batch, so one undo restores the old memory and expires the new. A pinned memory passes
   * its pin to its successor, so consolidation never silently drops something from the resident block.
   */
  async supersede(oldId: number, newWrite: MemoryWrite, actor: MemoryActor): Promise<SaveMemoryResult> {
    const write = checkWrite(newWrite);
    return this.write((tx, journal) => this.supersedeIn(tx, journal, oldId, write, newWrite.pinned, actor));
  }

  private async supersedeIn(
    tx: Transaction,
    journal: Journal,
    oldId: number,
    write: CheckedWrite,
    askedPinned: boolean | undefined,
    actor: MemoryActor,
  ): Promise<SaveMemoryResult> {
    const batchId = write.batchId ?? randomUUID();
    const old = await requireActive(tx, oldId, 'superseded');
    const inheritsPin = old.pinned && askedPinned === undefined;
    const memory = await this.insert(tx, write, inheritsPin ? old.pinOrder : undefined);
    const created = await journal(tx, memory.id, 'create', actor, null, snapshot(memory), batchId, write.reason);
    // The old one's valid time closes where the new one's starts (now, when it starts before the old one did).
    const now = new Date().toISOString();
    const closesAt = write.validFrom && (!old.validFrom || write.validFrom >= old.validFrom) ? write.validFrom : now;
    const { before, after } = diff(old, {
      status: 'superseded',
      supersededBy: memory.id,
      validTo: old.validTo && old.validTo < closesAt ? old.validTo : closesAt,
    });
    await applyFields(tx, oldId, after);
    await journal(tx, oldId, 'supersede', actor, before, after, batchId, write.reason);
    return { memory, outcome: 'created' as const, changeId: created.id, superseded: oldId };
  }

  /**
   * Restores what a change replaced — and every change of its batch, newest first — recording each
   * as an 'undo' entry. Undoing a 'create' expires the memory (rows are never deleted). A change that
   * is already undone, or whose fields were changed again since, is a conflict: undo the later one first.
   */
  async undo(changeId: number, actor: MemoryActor): Promise<Memory> {
    return (await this.write((tx, journal) => this.undoIn(tx, journal, changeId, actor))).memory;
  }

  private async undoIn(tx: Transaction, journal: Journal, changeId: number, actor: MemoryActor): Promise<{ memory: Memory; undone: number[] }> {
    const target = await requireChange(tx, changeId);
    if (target.action === 'undo') invalid('changeId', 'An undo cannot itself be undone; make the change again instead.');
    if (target.undoneBy !== null) throw new ApiError('conflict', `Change ${changeId} was already undone.`);
    const batch = target.batchId
      ? (
          await tx.query<ChangeRow>(`SELECT * FROM memory_changes WHERE batch_id = $1 AND undone_by IS NULL AND action <> 'undo' ORDER BY id DESC`, [
            target.batchId,
          ])
        ).rows.map(toChange)
      : [target];
    for (const c of batch) await assertNotChangedSince(tx, c);

    const undoBatch = batch.length > 1 ? randomUUID() : undefined;
    for (const c of batch) {
      const current = await requireMemory(tx, c.memoryId);
      const restore: Fields = c.action === 'create' ? { status: 'expired', validTo: new Date().toISOString() } : (c.before ?? {});
      const { before, after } = diff(current, restore);
      await applyFields(tx, c.memoryId, after);
      const undo = await journal(tx, c.memoryId, 'undo', actor, before, after, undoBatch, encodeReason({ code: 'undo', changeId: c.id, action: c.action }));
      await tx.query('UPDATE memory_changes SET undone_by = $2 WHERE id = $1', [c.id, undo.id]);
    }
    const forgets = batch.filter((c) => c.action === 'forget').map((c) => c.id);
    if (forgets.length) for (const follower of this.forgetFollowers) await follower.undone(tx, forgets);
    return { memory: await requireMemory(tx, target.memoryId), undone: batch.map((c) => c.id) };
  }

  // ---- reads (reads.ts): the Memories view's list and detail, and what the entity graph records mentions of ----

  get(id: number): Promise<{ memory: Memory; history: MemoryChange[]; chain: Memory[] }> {
    return reads.get(this.db, id);
  }
  list(f: MemoryFilter = {}): Promise<{ items: Memory[]; total: number }> {
    return reads.list(this.db, f);
  }
  getMany(ids: number[]): Promise<Memory[]> {
    return reads.getMany(this.db, ids);
  }
  activeThenNewest(ids: number[], limit: number): Promise<number[]> {
    return reads.activeThenNewest(this.db, ids, limit);
  }
  changeTimes(): Promise<{ ids: number[]; updatedAt: string[] }> {
    return reads.changeTimes(this.db);
  }
  activeVersionOf(id: number): Promise<number | null> {
    return reads.activeVersionOf(this.db, id);
  }

  /** Counts a showing to the model (passive recall, resident block). Not a change: not journalled. */
  async addInjected(ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query('UPDATE memories SET injected_count = injected_count + 1 WHERE id = ANY($1::bigint[])', [[...new Set(ids)]]);
  }

  // ---- reviews (reads.ts): what the sleep cycle reads to reconsider, report and dream ----

  activeOutlines(ids: number[]): Promise<Map<number, MemoryOutline>> {
    return reads.activeOutlines(this.db, ids);
  }
  writesSince(after: number, notBy: MemoryActor): Promise<{ id: number; memoryId: number }[]> {
    return reads.writesSince(this.db, after, notBy);
  }
  changesBy(actors: MemoryActor[], after: number): Promise<{ id: number; action: MemoryChange['action'] }[]> {
    return reads.changesBy(this.db, actors, after);
  }
  changesWithText(ids: number[]): Promise<ChangeWithText[]> {
    return reads.changesWithText(this.db, ids);
  }
  lastId(): Promise<number> {
    return reads.lastId(this.db);
  }
  namingSince(
    after: number,
    upTo: number,
    o: { notFrom: MemorySource; except: number[]; limit: number },
  ): Promise<Pick<Memory, 'id' | 'entityNames' | 'createdAt'>[]> {
    return reads.namingSince(this.db, after, upTo, o);
  }
  alikePairs(pairs: [number, number][], minSimilarity: number): Promise<[number, number][]> {
    return reads.alikePairs(this.db, pairs, minSimilarity);
  }
  pinnedCount(): Promise<number> {
    return reads.pinnedCount(this.db);
  }
  stalePins(now: Date, days: number, limit: number): Promise<{ id: number; lastCitedAt: string | null }[]> {
    return reads.stalePins(this.db, now, days, limit);
  }
  muchCited(minReferences: number, limit: number): Promise<{ id: number; referenceCount: number }[]> {
    return reads.muchCited(this.db, minReferences, limit);
  }
  olderSample(seed: string, limit: number): Promise<Pick<Memory, 'id' | 'type' | 'content' | 'validFrom' | 'validTo' | 'createdAt'>[]> {
    return reads.olderSample(this.db, seed, limit);
  }

  // ---- internals ----

  /** Runs `fn` in one transaction and reports its journal entries only once they are committed. */
  private async write<T>(fn: (tx: Transaction, journal: Journal) => Promise<T>): Promise<T> {
    const changes: MemoryChange[] = [];
    const journal: Journal = async (tx, memoryId, action, actor, before, after, batchId, reason) => {
      const row = (
        await tx.query<ChangeRow>(
          `INSERT INTO memory_changes (memory_id, action, actor, before, after, batch_id, reason)
           VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7) RETURNING *`,
          [memoryId, action, actor, before && JSON.stringify(before), after && JSON.stringify(after), batchId ?? null, reason ?? null],
        )
      ).rows[0]!;
      const change = toChange(row);
      changes.push(change);
      return change;
    };
    const result = await this.db.transaction((tx) => fn(tx, journal));
    for (const change of changes) {
      try {
        this.onChange(change);
      } catch (err) {
        this.log('error', `a memory change listener failed: ${(err as Error).message}`);
      }
    }
    return result;
  }

  private async insert(tx: Queryable, w: CheckedWrite, inheritedPinOrder?: number | null): Promise<Memory> {
    const pinned = w.pinned || inheritedPinOrder !== undefined;
    const pinOrder = inheritedPinOrder ?? (pinned ? await nextPinOrder(tx) : null);
    const row = (
      await tx.query<MemoryRow>(
        `INSERT INTO memories (type, content, pinned, pin_order, valid_from, valid_to, source, source_message_ids, entity_names, fts_segmented)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${COLUMNS}`,
        [
          w.type,
          w.content,
          pinned,
          pinOrder,
          w.validFrom ?? null,
          w.validTo ?? null,
          w.source,
          w.sourceMessageIds,
          w.entityNames,
          w.segmented !== undefined ? w.segmented : segmentForIndex(w.content),
        ],
      )
    ).rows[0]!;
    return toMemory(row);
  }
}

type Journal = (
  tx: Transaction,
  memoryId: number,
  action: MemoryChange['action'],
  actor: MemoryActor,
  before: Fields | null,
  after: Fields | null,
  batchId?: string,
  reason?: string,
) => Promise<MemoryChange>;
