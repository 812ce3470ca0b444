// Test fixtures for the sleep cycle's fault tests: a data folder seeded with backdated chat (the API
// cannot backdate a message), a sleep service built the way createHost builds it but with a clock and
// the scheduler in the test's hands, and the check that no chat was consolidated twice.
// No vitest import here: the child process that is killed mid-cycle shares nothing with it but files.
import fs from 'node:fs';
import path from 'node:path';
import { SelfLayer } from '../../companion/self-layer.js';
import { openDatabase, type Database } from '../../db/open.js';
import { Conversations } from '../../conversations/conversations.js';
import { HostEvents } from '../../events/events.js';
import { modelsDir, Providers } from '../../providers/providers.js';
import { OwnerOnlyFileSecretStore, type SecretStore } from '../../settings/secrets.js';
import { SettingsStore, type SettingsPatch } from '../../settings/settings.js';
import { MemoryStore } from '../../memory/store.js';
import { Recall } from '../../memory/recall/index.js';
import { VectorSlot } from '../../embed/active.js';
import { batchedEntityChanges } from '../../graph/indexer.js';
import { EntityStore } from '../../graph/store.js';
import type { SleepStep } from '../dag.js';
import { MEMORY_LINE, TRANSCRIPT_LINE } from '../schemas.js';
import { SleepService } from '../service.js';
import type { SleepStepDeps } from '../steps/deps.js';

/** A secret store that holds nothing: for tests whose connections need no key. */
export const noSecrets: SecretStore = { kind: 'owner-only-file', get: async () => undefined, set: async () => {}, delete: async () => {} };

/**
 * The sleep steps' dependencies on `db`, built as createHost builds them — the same stores, recall,
 * the vector slot (empty) and the graph announcing its changes on the same events — with the test's
 * clock and secrets (none by default); `extra` replaces any of them.
 */
export function stepDeps(
  db: Database,
  dataDir: string,
  o: { now: () => Date; secrets?: SecretStore; providerTimeoutMs?: number; extra?: Partial<SleepStepDeps> },
): SleepStepDeps {
  const events = new HostEvents();
  const vectors = new VectorSlot();
  const store = new MemoryStore(db);
  const conversations = new Conversations(db);
  return {
    db,
    dataDir,
    store,
    conversations,
    recall: new Recall({ db, vectors }),
    vectors,
    graph: new EntityStore(
      db,
      { conversations, memories: store },
      () => {},
      batchedEntityChanges((entityIds) => events.emit('graph.changed', { entityIds })),
    ),
    settings: new SettingsStore(db, () => {}),
    providers: new Providers(db, o.secrets ?? noSecrets, { timeoutMs: o.providerTimeoutMs, modelsDir: modelsDir(dataDir) }),
    selfLayer: new SelfLayer(db),
    events,
    now: o.now,
    log: () => {},
    ...o.extra,
  };
}

export interface SeedMessage {
  /** A key naming the conversation; one conversation is created per key. */
  conversation: string;
  at: Date;
  role: 'user' | 'assistant';
  content: string;
  speaker?: string;
}

/** Writes conversations and backdated messages; returns the conversation id of each key. */
export async function seedMessages(db: Database, messages: SeedMessage[]): Promise<Map<string, string>> {
  const conversations = new Conversations(db);
  const ids = new Map<string, string>();
  for (const m of messages) {
    let id = ids.get(m.conversation);
    if (!id) {
      id = (await conversations.create(m.conversation)).id;
      ids.set(m.conversation, id);
    }
    await conversations.append({ conversationId: id, role: m.role, content: m.content, status: 'complete', speaker: m.speaker ?? null, createdAt: m.at });
  }
  return ids;
}

/** A new data folder with these settings and messages, closed again (ready for a host, here or in a child). */
export async function seedDataDir(
  dir: string,
  template: Blob,
  o: { settings?: SettingsPatch; messages: SeedMessage[]; prepare?: (db: Database) => Promise<void> },
): Promise<Map<string, string>> {
  const db = await openDatabase(dir, { template });
  try {
    if (o.settings) await new SettingsStore(db, () => {}).update(o.settings);
    await new SelfLayer(db).ensureDefaults();
    const ids = await seedMessages(db, o.messages);
    await o.prepare?.(db);
    return ids;
  } finally {
    await db.close();
  }
}

/** A copy of a closed data folder (a fixture is seeded once and copied per test: copying is much cheaper than seeding). */
export function copyDataDir(from: string, to: string): string {
  fs.cpSync(from, to, { recursive: true });
  return to;
}

/**
 * Three sleep days of chat in two conversations, short enough that each conversation-day is one piece
 * of light sleep: with a 512-token model context every piece is a call of its own (the material
 * budget bottoms out at 256 tokens), so the number of calls is fixed whatever else the prompt holds.
 * Times are UTC evenings; the fixture's time zone is UTC.
 */
export function threeDaysOfChat(firstDay: string): SeedMessage[] {
  const lines: [string, string][] = [
    ['Mara', 'I finally finished the watercolour of the harbour in Lisbon, and I am really proud of how the light came out.'],
    ['Me', 'That sounds wonderful, Mara. The harbour in the evening light must have been a joy to paint.'],
    ['Mara', 'My sister Ines wants to frame it for her new flat in Porto, which makes me happy and a little nervous.'],
    ['Mara', 'I am worried about the job interview at the museum on Friday; I keep rehearsing my answers.'],
    ['Me', 'You know the collection better than anyone, Mara. What worries you most about it?'],
    ['Mara', 'Mostly the panel. Ines says I should talk about the restoration project I led last spring.'],
  ];
  const out: SeedMessage[] = [];
  for (let d = 0; d < 3; d++) {
    const day = new Date(`${firstDay}T00:00:00Z`);
    day.setUTCDate(day.getUTCDate() + d);
    for (const [c, conversation] of ['Painting', 'Interview'].entries()) {
      for (let i = 0; i < 3; i++) {
        const [speaker, text] = lines[c * 3 + i]!;
        out.push({
          conversation: `${conversation} ${d + 1}`,
          at: new Date(day.getTime() + (19 + c) * 3_600_000 + i * 60_000),
          role: speaker === 'Me' ? 'assistant' : 'user',
          ...(speaker === 'Me' ? {} : { speaker }),
          content: `${text} (day ${d + 1})`,
        });
      }
    }
  }
  return out;
}

/**
 * Messages that more than one anchor (or more than one narrative) was written from: a piece of chat
 * read twice. Empty when every conversation-day was consolidated once.
 */
export async function readTwice(db: Database): Promise<string[]> {
  return (
    await db.query<{ what: string }>(
      `SELECT kind || ' ' || m AS what FROM diary_blocks, unnest(source_message_ids) AS m
        WHERE kind IN ('anchor', 'narrative') GROUP BY kind, m HAVING count(*) > 1`,
    )
  ).rows.map((r) => r.what);
}

/** The last user message of a chat request body a fake model received: a background call's prompt. */
export function lastUser(body: unknown): string {
  return String(((body as { messages?: { role: string; content: unknown }[] } | undefined)?.messages ?? []).findLast((m) => m.role === 'user')?.content ?? '');
}

/** The ref ("m3") of the transcript line in a nap or light-sleep prompt whose text contains `text`. */
export function refOf(prompt: string, text: string): string | undefined {
  return prompt
    .split('\n')
    .map((l) => TRANSCRIPT_LINE.exec(l))
    .find((m) => m?.[4]?.includes(text))?.[1];
}

/** The id of the listed memory whose text starts with `text` in a deep-sleep prompt. */
export function listedId(prompt: string, text: string): number | undefined {
  for (const line of prompt.split('\n')) {
    const m = MEMORY_LINE.exec(line.trim());
    if (m && m[3]!.startsWith(text)) return Number(m[1]);
  }
  return undefined;
}

export interface ServiceHarness {
  service: SleepService;
  deps: SleepStepDeps;
  events: HostEvents;
  settings: SettingsStore;
}

/**
 * A SleepService wired as createHost wires it (same stores, same events), with the clock and the
 * scheduler options given — so a test can call tick() on a clock it moves. The timer stays off.
 */
export async function sleepService(
  db: Database,
  dataDir: string,
  o: { now: () => Date; steps?: SleepStep[] | ((deps: SleepStepDeps) => SleepStep[]); idleMs?: number; retryMs?: number; providerTimeoutMs?: number },
): Promise<ServiceHarness> {
  const deps = stepDeps(db, dataDir, { now: o.now, secrets: new OwnerOnlyFileSecretStore(dataDir), providerTimeoutMs: o.providerTimeoutMs });
  await deps.selfLayer.ensureDefaults();
  const steps = typeof o.steps === 'function' ? o.steps(deps) : o.steps;
  const service = new SleepService(deps, { tickMs: 0, idleMs: o.idleMs ?? 0, retryMs: o.retryMs, steps });
  return { service, deps, events: deps.events, settings: deps.settings };
}

export function snapshotFiles(dataDir: string): string[] {
  const dir = path.join(dataDir, 'snapshots');
  return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
}
