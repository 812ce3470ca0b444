// What the Diary, Dreams and Sleep views read: diary days and the mood series, dreams, runs with their
// steps, the audit log, and the morning digest with the live state of each change (undone or not).
import {
  ApiError,
  type AuditEntry,
  type AuditEntryDetail,
  type DiaryBlock,
  type DiaryDay,
  type DigestChange,
  type Mood,
  type MoodPoint,
  type SleepDigest,
  type SleepProposal,
  type SleepRun,
} from '../../shared/api.js';
import type { Database } from '../db/open.js';
import type { MemoryStore } from '../memory/store.js';
import { readNeedsReason } from './dag.js';
import { decodeProposalReason } from './proposal-reasons.js';
import type { DigestDetails } from './steps/digest.js';

interface BlockRow {
  id: number;
  day: string;
  kind: DiaryBlock['kind'];
  conversation_id: string | null;
  title: string | null;
  body: string;
  mood: Mood | null;
  created_at: Date;
  hidden_at: Date | null;
  details?: unknown;
  run_id?: number | null;
}

const BLOCK_COLUMNS = 'id::float8 AS id, day, kind, conversation_id, title, body, mood, created_at, hidden_at';

export function toBlock(r: BlockRow): DiaryBlock {
  return {
    id: Number(r.id),
    day: r.day,
    kind: r.kind,
    conversationId: r.conversation_id,
    title: r.title,
    body: r.body,
    mood: r.mood,
    createdAt: r.created_at.toISOString(),
    hiddenAt: r.hidden_at ? r.hidden_at.toISOString() : null,
  };
}

/** The day's mood: the mean of its anchors, with their most frequent labels. */
export function dayMood(anchors: DiaryBlock[]): Mood | null {
  const moods = anchors.flatMap((a) => (a.mood ? [a.mood] : []));
  if (moods.length === 0) return null;
  const mean = (k: 'valence' | 'arousal') => moods.reduce((s, m) => s + m[k], 0) / moods.length;
  const counts = new Map<string, number>();
  for (const m of moods) for (const l of m.labels) counts.set(l.toLowerCase(), (counts.get(l.toLowerCase()) ?? 0) + 1);
  const labels = [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([l]) => l);
  return { valence: mean('valence'), arousal: mean('arousal'), labels };
}

export async function diaryDays(db: Database, o: { limit?: number; before?: string }): Promise<DiaryDay[]> {
  const days = (
    await db.query<{ day: string }>(
      `SELECT DISTINCT day FROM diary_blocks
        WHERE kind IN ('anchor', 'imprint', 'narrative') AND hidden_at IS NULL AND ($1::text IS NULL OR day < $1)
        ORDER BY day DESC LIMIT $2`,
      [o.before ?? null, o.limit ?? 14],
    )
  ).rows.map((r) => r.day);
  if (days.length === 0) return [];
  const blocks = (
    await db.query<BlockRow>(
      `SELECT ${BLOCK_COLUMNS} FROM diary_blocks
        WHERE day = ANY($1::text[]) AND kind IN ('anchor', 'imprint', 'narrative') AND hidden_at IS NULL ORDER BY id`,
      [days],
    )
  ).rows.map(toBlock);
  return days.map((day) => {
    const of = (kind: DiaryBlock['kind']) => blocks.filter((b) => b.day === day && b.kind === kind);
    const anchors = of('anchor');
    return { day, mood: dayMood(anchors), anchors, imprints: of('imprint'), narratives: of('narrative') };
  });
}

export async function moodSeries(db: Database, days = 30): Promise<MoodPoint[]> {
  const rows = (
    await db.query<MoodPoint>(`SELECT day, valence, arousal, anchors, valence7, valence30, arousal7, arousal30 FROM mood_days ORDER BY day DESC LIMIT $1`, [
      days,
    ])
  ).rows;
  return rows.reverse().map((r) => ({ ...r, anchors: Number(r.anchors) }));
}

export async function hideBlock(db: Database, id: number, hidden: boolean): Promise<DiaryBlock> {
  const row = (
    await db.query<BlockRow>(
      `UPDATE diary_blocks SET hidden_at = CASE WHEN $2 THEN coalesce(hidden_at, now()) ELSE NULL END
        WHERE id = $1 AND kind <> 'digest' RETURNING ${BLOCK_COLUMNS}`,
      [id, hidden],
    )
  ).rows[0];
  if (!row) throw new ApiError('not_found', `There is no diary entry ${id}.`, 'id');
  return toBlock(row);
}

export async function dreams(db: Database, limit = 60): Promise<DiaryBlock[]> {
  return (
    await db.query<BlockRow>(`SELECT ${BLOCK_COLUMNS} FROM diary_blocks WHERE kind = 'dream' AND hidden_at IS NULL ORDER BY day DESC, id DESC LIMIT $1`, [
      limit,
    ])
  ).rows.map(toBlock);
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export async function sleepRuns(db: Database, limit: number, dependsOn: Map<string, string[]>): Promise<SleepRun[]> {
  const runs = (
    await db.query<{
      id: number;
      sleep_day: string;
      trigger: SleepRun['trigger'];
      status: SleepRun['status'];
      started_at: Date;
      finished_at: Date | null;
      error: string | null;
    }>(`SELECT id::int AS id, sleep_day, trigger, status, started_at, finished_at, error FROM sleep_runs ORDER BY id DESC LIMIT $1`, [limit])
  ).rows;
  if (runs.length === 0) return [];
  const steps = (
    await db.query<{
      run_id: number;
      step_id: string;
      status: SleepRun['steps'][number]['status'];
      reason: string | null;
      started_at: Date | null;
      finished_at: Date | null;
      stats: Record<string, number> | null;
      error: string | null;
    }>(`SELECT run_id::int AS run_id, step_id, status, reason, started_at, finished_at, stats, error FROM sleep_steps WHERE run_id = ANY($1::bigint[])`, [
      runs.map((r) => r.id),
    ])
  ).rows;
  const order = [...dependsOn.keys()];
  return runs.map((r) => ({
    id: r.id,
    sleepDay: r.sleep_day,
    trigger: r.trigger,
    status: r.status,
    startedAt: r.started_at.toISOString(),
    finishedAt: iso(r.finished_at),
    error: r.error,
    steps: steps
      .filter((s) => s.run_id === r.id)
      .sort((a, b) => order.indexOf(a.step_id) - order.indexOf(b.step_id))
      .map((s) => ({
        stepId: s.step_id,
        dependsOn: dependsOn.get(s.step_id) ?? [],
        status: s.status,
        reason: s.reason,
        waitedFor: readNeedsReason(s.reason),
        startedAt: iso(s.started_at),
        finishedAt: iso(s.finished_at),
        stats: s.stats,
        error: s.error,
      })),
  }));
}

interface AuditRow {
  id: number;
  purpose: string;
  step_id: string | null;
  run_id: number | null;
  model: string;
  prompt_chars: number;
  response_chars: number;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  duration_ms: number;
  status: AuditEntry['status'];
  error: string | null;
  created_at: Date;
  prompt?: string;
  response?: string;
}

const AUDIT_COLUMNS =
  'id::int AS id, purpose, step_id, run_id::int AS run_id, model, prompt_chars, response_chars, prompt_tokens, completion_tokens, duration_ms, status, error, created_at';

function toAudit(r: AuditRow): AuditEntry {
  return {
    id: r.id,
    purpose: r.purpose,
    stepId: r.step_id,
    runId: r.run_id,
    model: r.model,
    promptChars: r.prompt_chars,
    responseChars: r.response_chars,
    promptTokens: r.prompt_tokens,
    completionTokens: r.completion_tokens,
    durationMs: r.duration_ms,
    status: r.status,
    error: r.error,
    createdAt: r.created_at.toISOString(),
  };
}

export async function auditLog(
  db: Database,
  o: { status?: AuditEntry['status']; limit?: number; offset?: number },
): Promise<{ items: AuditEntry[]; total: number }> {
  const status = o.status ?? null;
  const total = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM auto_llm_runs WHERE $1::text IS NULL OR status = $1`, [status])).rows[0]!.n;
  const rows = (
    await db.query<AuditRow>(`SELECT ${AUDIT_COLUMNS} FROM auto_llm_runs WHERE $1::text IS NULL OR status = $1 ORDER BY id DESC LIMIT $2 OFFSET $3`, [
      status,
      o.limit ?? 50,
      o.offset ?? 0,
    ])
  ).rows;
  return { items: rows.map(toAudit), total };
}

export async function auditEntry(db: Database, id: number): Promise<AuditEntryDetail> {
  const row = (await db.query<AuditRow>(`SELECT ${AUDIT_COLUMNS}, prompt, response FROM auto_llm_runs WHERE id = $1`, [id])).rows[0];
  if (!row) throw new ApiError('not_found', `There is no background call ${id}.`, 'id');
  return { ...toAudit(row), prompt: row.prompt ?? '', response: row.response ?? '' };
}

interface ProposalRow {
  id: number;
  memory_id: number;
  action: 'pin' | 'unpin';
  reason: string;
  status: SleepProposal['status'];
}

/** The proposals with the text of their memories; one whose memory is missing is left out. */
async function withText(memories: MemoryStore, rows: ProposalRow[]): Promise<SleepProposal[]> {
  const text = new Map((await memories.getMany([...new Set(rows.map((r) => Number(r.memory_id)))])).map((m) => [m.id, m.content]));
  return rows.flatMap((r) => {
    const content = text.get(Number(r.memory_id));
    return content === undefined
      ? []
      : [{ id: Number(r.id), memoryId: Number(r.memory_id), action: r.action, text: content, ...decodeProposalReason(r.reason), status: r.status }];
  });
}

export async function proposal(db: Database, memories: MemoryStore, id: number): Promise<SleepProposal> {
  const rows = (
    await db.query<ProposalRow>(`SELECT p.id::int AS id, p.memory_id::int AS memory_id, p.action, p.reason, p.status FROM sleep_proposals p WHERE p.id = $1`, [
      id,
    ])
  ).rows;
  const [found] = await withText(memories, rows);
  if (!found) throw new ApiError('not_found', `There is no proposal ${id}.`, 'id');
  return found;
}

export async function setProposalStatus(db: Database, id: number, status: 'accepted' | 'dismissed'): Promise<void> {
  await db.query(`UPDATE sleep_proposals SET status = $2, resolved_at = now() WHERE id = $1`, [id, status]);
}

export async function digest(db: Database, memories: MemoryStore, day?: string): Promise<SleepDigest | null> {
  const block = (
    await db.query<BlockRow>(
      `SELECT ${BLOCK_COLUMNS}, details, run_id::int AS run_id FROM diary_blocks
        WHERE kind = 'digest' AND ($1::text IS NULL OR day = $1) ORDER BY id DESC LIMIT 1`,
      [day ?? null],
    )
  ).rows[0];
  if (!block) return null;
  const details = block.details as DigestDetails;
  const changes = await memories.changesWithText(details.changeIds);
  const items: DigestChange[] = changes.map((c) => ({
    changeId: c.id,
    memoryId: c.memoryId,
    action: c.action,
    actor: c.actor,
    text: c.action === 'create' ? (c.after?.content ?? c.content) : c.content,
    reason: c.reason,
    reasonCode: c.reasonCode ?? null,
    undoneBy: c.undoneBy,
  }));
  const proposals = details.proposalIds.length
    ? await withText(
        memories,
        (
          await db.query<ProposalRow>(
            `SELECT p.id::int AS id, p.memory_id::int AS memory_id, p.action, p.reason, p.status
               FROM sleep_proposals p WHERE p.id = ANY($1::bigint[]) ORDER BY p.id`,
            [details.proposalIds],
          )
        ).rows,
      )
    : [];
  return {
    day: block.day,
    runId: Number(block.run_id),
    createdAt: block.created_at.toISOString(),
    summary: block.body,
    added: items.filter((i) => i.action === 'create'),
    changed: items.filter((i) => i.action !== 'create' && i.action !== 'supersede'),
    superseded: items.filter((i) => i.action === 'supersede'),
    proposals,
    diary: details.diary,
  };
}
