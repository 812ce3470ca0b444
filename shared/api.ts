// The one API contract between the renderer and the host.
//
// Every method has a zod schema for its input (the host validates every call: the renderer is
// untrusted input) and a TypeScript type for its output. Three transports carry it unchanged:
// a MessagePort in Electron, HTTP + server-sent events in browser mode, a direct call in tests.
import { z } from 'zod';

// ---------------------------------------------------------------------------------------------
// Domain types
// ---------------------------------------------------------------------------------------------

export const PROVIDER_KINDS = ['openai-compatible', 'anthropic', 'local'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

export const SELF_BLOCK_KEYS = [
  'identity',
  'personality',
  'values',
  'relationship',
  'voice',
  'narrative',
] as const;
export type SelfBlockKey = (typeof SELF_BLOCK_KEYS)[number];

export type MessageRole = 'user' | 'assistant';
/** streaming: a reply being written now; partial: cut off by Stop or a crash; error: the model call failed. */
export type MessageStatus = 'complete' | 'streaming' | 'partial' | 'error';

export interface ApiErrorShape {
  code: ErrorCode;
  message: string;
  /** For invalid_input: the dotted path of the offending field. */
  field?: string;
}

export const ERROR_CODES = [
  'invalid_input',
  'not_found',
  'conflict',
  'unauthorized',
  'payload_too_large',
  'unknown_method',
  'data_dir_locked',
  'no_provider',
  // Provider failures, in words a person can act on.
  'provider_unreachable',
  'provider_auth',
  'provider_model_not_found',
  'provider_rate_limited',
  'provider_quota',
  'provider_server_error',
  'provider_timeout',
  'provider_bad_response',
  'provider_context_overflow',
  'provider_not_installed',
  // On-device model downloads (Settings → Models → On this computer).
  /** Not a model Anima offers, or the model host does not have it (or one of its files). */
  'model_not_found',
  /** The model is not downloaded (yet), or not completely. */
  'model_not_installed',
  'model_disk_full',
  /** A downloaded file had the wrong size or checksum and was discarded. */
  'model_integrity',
  /** An installed model's files are missing or cut short on disk (nothing was thrown away). */
  'model_damaged',
  /** The model host could not be reached, or kept failing. */
  'model_network',
  /** The model is downloading or being removed right now. */
  'model_busy',
  /** The disk refused a write or a rename. */
  'model_io',
  /** The person pressed Stop. */
  'cancelled',
  /** Anima closed or crashed while the reply was being written. */
  'interrupted',
  'internal',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export interface Message {
  id: string;
  conversationId: string;
  role: MessageRole;
  content: string;
  status: MessageStatus;
  error: ApiErrorShape | null;
  /** The model that wrote an assistant message. */
  model: string | null;
  createdAt: string; // ISO 8601
  /** Set when a later version replaced this one (regenerate, edit): kept, never deleted. */
  replacedBy: string | null;
  /** Who spoke, when not simply "the person" or "the companion" (imported conversations). */
  speaker: string | null;
  /** Memories passive recall put in front of the model for this reply. */
  injectedMemoryIds: number[];
}

// ---- Long-term memory ----

export const MEMORY_TYPES = ['world', 'experience', 'opinion', 'observation', 'preference', 'procedural'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];
export const MEMORY_STATUSES = ['active', 'superseded', 'expired'] as const;
export type MemoryStatus = (typeof MEMORY_STATUSES)[number];
export type MemorySource = 'tool' | 'light-sleep' | 'deep-sleep' | 'user';
export type MemoryActor = 'companion' | 'person' | 'light-sleep' | 'deep-sleep' | 'graph' | 'system';

export interface Memory {
  id: number;
  type: MemoryType;
  content: string;
  status: MemoryStatus;
  supersededBy: number | null;
  validFrom: string | null;
  validTo: string | null;
  pinned: boolean;
  pinOrder: number | null;
  referenceCount: number;
  injectedCount: number;
  source: MemorySource;
  sourceMessageIds: string[];
  entityNames: string[];
  createdAt: string;
  updatedAt: string;
}

/** One entry of the change journal: what changed, before and after, by whom, when. */
export interface MemoryChange {
  id: number;
  memoryId: number;
  action: 'create' | 'update' | 'forget' | 'restore' | 'pin' | 'unpin' | 'reorder' | 'supersede' | 'expire' | 'merge' | 'undo';
  actor: MemoryActor;
  before: Partial<Memory> | null;
  after: Partial<Memory> | null;
  batchId: string | null;
  reason: string | null;
  undoneBy: number | null;
  createdAt: string;
}

export const RECALL_SOURCES = ['semantic', 'session', 'limbic', 'autobiographical'] as const;
export type RecallSource = (typeof RECALL_SOURCES)[number];

export type RecallLink =
  | { kind: 'memory'; memoryId: number }
  | { kind: 'message'; conversationId: string; messageId: string }
  | { kind: 'diary'; day: string; blockId: number };

export interface RecallHit {
  source: RecallSource;
  /** For semantic hits the memory's type; otherwise the source name. */
  memoryType: string;
  text: string;
  /** When it was said or written (ISO 8601). */
  time: string;
  score: number;
  link: RecallLink;
}

// ---- Sleep cycle, diary and dreams ----

export const DIARY_KINDS = ['anchor', 'imprint', 'narrative', 'dream', 'digest'] as const;
export type DiaryKind = (typeof DIARY_KINDS)[number];

/** How a conversation felt: valence -1 (low) … 1 (bright), arousal 0 (calm) … 1 (intense). */
export interface Mood {
  valence: number;
  arousal: number;
  labels: string[];
}

/** One append-only diary row: an anchor, an imprint, a narrative, a dream or a morning digest. */
export interface DiaryBlock {
  id: number;
  /** The sleep day it belongs to (YYYY-MM-DD). */
  day: string;
  kind: DiaryKind;
  conversationId: string | null;
  title: string | null;
  body: string;
  mood: Mood | null;
  createdAt: string;
  /** Set when the person hid it (a tombstone: the text stays, out of view and recall). */
  hiddenAt: string | null;
}

export interface DiaryDay {
  day: string;
  /** The mean of the day's anchors; null when the day has none. */
  mood: Mood | null;
  anchors: DiaryBlock[];
  imprints: DiaryBlock[];
  narratives: DiaryBlock[];
}

export interface MoodPoint {
  day: string;
  /** Mean of the day's anchors. */
  valence: number;
  arousal: number;
  anchors: number;
  /** Trailing means over the last 7 and 30 calendar days that have anchors (this day included). */
  valence7: number;
  valence30: number;
  arousal7: number;
  arousal30: number;
}

export const SLEEP_STEP_IDS = ['memory-ref-sync', 'light-sleep', 'snapshot', 'deep-sleep', 'dream', 'mood-trend', 'digest'] as const;
export type SleepStepId = (typeof SLEEP_STEP_IDS)[number];
export type SleepRunStatus = 'running' | 'done' | 'failed' | 'stopped';
/** 'stopped': cut short by the budget or by the person; what it finished is kept. */
export type SleepStepStatus = 'pending' | 'running' | 'done' | 'failed' | 'skipped' | 'stopped';
export type SleepTrigger = 'schedule' | 'catch-up' | 'manual';

export interface SleepStepInfo {
  stepId: string;
  dependsOn: string[];
  status: SleepStepStatus;
  /** Why it was skipped, or where its result came from ("done in run 4"). */
  reason: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  /** Counts: calls, memories written, anchors, … (whatever the step reports). */
  stats: Record<string, number> | null;
  error: string | null;
}

export interface SleepRun {
  id: number;
  sleepDay: string;
  trigger: SleepTrigger;
  status: SleepRunStatus;
  startedAt: string;
  finishedAt: string | null;
  /** Why it stopped or failed, in words ("over tonight's budget: 40 of 40 calls"). */
  error: string | null;
  steps: SleepStepInfo[];
}

export interface SleepProgressEvent {
  runId: number;
  sleepDay: string;
  stepId: string;
  status: SleepStepStatus;
  /** Steps finished (done, failed or skipped) out of total. */
  done: number;
  total: number;
}

export interface SleepBudgetUse {
  /** What the current night (sleep day) has used so far. */
  calls: number;
  tokens: number;
  maxCalls: number;
  maxTokens: number;
}

export interface SleepStatus {
  running: SleepProgressEvent | null;
  lastRun: SleepRun | null;
  /** When the next scheduled cycle starts (ISO 8601). */
  nextAt: string;
  /** The sleep day a cycle would work on now. */
  sleepDay: string;
  budget: SleepBudgetUse;
  /** Why "Sleep now" cannot run, if it cannot (no model connection), in the host's words… */
  blocked: string | null;
  /** …and as an error code the UI puts in the person's language. */
  blockedCode: ErrorCode | null;
}

export interface AuditEntry {
  id: number;
  purpose: string;
  stepId: string | null;
  runId: number | null;
  model: string;
  promptChars: number;
  responseChars: number;
  promptTokens: number | null;
  completionTokens: number | null;
  durationMs: number;
  status: 'ok' | 'error' | 'invalid';
  error: string | null;
  createdAt: string;
}

export interface AuditEntryDetail extends AuditEntry {
  prompt: string;
  response: string;
}

/** One line of the morning digest: a journalled change the cycle made, undoable. */
export interface DigestChange {
  changeId: number;
  memoryId: number;
  action: MemoryChange['action'];
  actor: MemoryActor;
  /** The memory's text now (for a create or an update) or before (for a supersede or expiry). */
  text: string;
  reason: string | null;
  /** Set once undone. */
  undoneBy: number | null;
}

export interface SleepProposal {
  id: number;
  memoryId: number;
  action: 'pin' | 'unpin';
  text: string;
  reason: string;
  status: 'open' | 'accepted' | 'dismissed';
}

export interface SleepDigest {
  day: string;
  runId: number;
  createdAt: string;
  /** The digest's own words: "While I slept I …". */
  summary: string;
  added: DigestChange[];
  changed: DigestChange[];
  superseded: DigestChange[];
  proposals: SleepProposal[];
  diary: { anchors: number; imprints: number; narratives: number; dreams: number };
}

export interface SleepSettings {
  /** Run the cycle at the sleep time and catch up at launch. Off: only "Sleep now". */
  auto: boolean;
  /** Background model calls per night; past it the cycle stops at a step boundary and finishes the next night. */
  maxCallsPerNight: number;
  maxTokensPerNight: number;
}

// ---- Entity graph ----

export const ENTITY_KINDS = ['person', 'place', 'org', 'thing', 'topic', 'self', 'user'] as const;
export type EntityKind = (typeof ENTITY_KINDS)[number];

/** Someone or something the companion knows about; 'self' (the companion) and 'user' (the person) always exist. */
export interface Entity {
  id: number;
  kind: EntityKind;
  name: string;
  aliases: string[];
  mentionCount: number;
  firstSeen: string | null;
  lastSeen: string | null;
  status: 'active' | 'merged' | 'hidden';
  /** For a merged entity: the one it became part of. */
  mergedInto: number | null;
}

export interface EntityEdge {
  id: number;
  source: number;
  target: number;
  /** 'co_mention', or a typed relation such as 'lives_in', 'works_at', 'sister_of', 'likes'. */
  relation: string;
  weight: number;
  /** When the relation held; an edge whose valid time closed is history, still shown on the time slider. */
  validFrom: string | null;
  validTo: string | null;
  evidenceMemoryIds: number[];
}

export interface GraphSlice {
  /** 'whole' up to the drawing limit; above it, 'ego': the neighbourhood of `centerId`. */
  mode: 'whole' | 'ego';
  centerId: number | null;
  nodes: Entity[];
  edges: EntityEdge[];
  totalEntities: number;
  totalEdges: number;
  /** The earliest valid time on any edge: where the time slider starts. */
  earliest: string | null;
}

export interface EntityChange {
  id: number;
  entityId: number;
  /** 'strengthen': a relation said again (weight + 1, more evidence); 'close': a relation's valid time ended. */
  action: 'rename' | 'alias' | 'merge' | 'hide' | 'unhide' | 'relate' | 'strengthen' | 'close' | 'undo';
  before: unknown;
  after: unknown;
  undoneBy: number | null;
  createdAt: string;
}

export interface EntityDetail {
  entity: Entity;
  /** The observation memory deep sleep keeps about it, when there is one. */
  profile: Memory | null;
  /** Active memories that mention it, newest first. */
  facts: Memory[];
  relations: (EntityEdge & { other: Pick<Entity, 'id' | 'name' | 'kind'> })[];
  conversations: { id: string; title: string; mentions: number; lastAt: string }[];
  history: EntityChange[];
}

export interface ResidentPreview {
  /** The exact block the system prompt carries. */
  text: string;
  chars: number;
  estimatedTokens: number;
  pinned: number;
  referenced: number;
  /** Pinned memories beyond the cap of 40 that were left out. */
  pinnedCut: number;
}

export interface SaveMemoryResult {
  memory: Memory;
  /** 'updated' when an active near-duplicate existed and was updated instead of adding a copy. */
  outcome: 'created' | 'updated';
  changeId: number;
}

export interface ConversationSummary {
  id: string;
  title: string;
  archived: boolean;
  createdAt: string;
  updatedAt: string;
  messageCount: number;
  /** The start of the last visible message, for the list. */
  preview: string;
  /** When a search matched message content rather than the title: a snippet of that message. */
  matchSnippet?: string;
}

export interface Conversation extends ConversationSummary {
  /** The system prompt snapshot and the sleep day it was built for. */
  systemPrompt: string;
  systemPromptDay: string | null;
}

export interface ProviderConfig {
  id: string;
  kind: ProviderKind;
  name: string;
  baseUrl: string;
  model: string;
  /** The model's context window in tokens; history beyond it is trimmed, oldest first. */
  contextTokens: number;
  hasApiKey: boolean;
}

export type Language = 'system' | 'en' | 'zh-CN';
export type Theme = 'system' | 'light' | 'dark';

export interface Settings {
  chatProviderId: string | null;
  /** The model for background work (sleep cycle); null means "same as chat". */
  backgroundProviderId: string | null;
  /** HH:MM local time at which the sleep day ends. */
  sleepTime: string;
  /** IANA time zone name, e.g. Europe/Berlin. */
  timeZone: string;
  language: Language;
  theme: Theme;
  onboarded: boolean;
  passiveRecall: boolean;
  memory: MemorySettings;
  sleep: SleepSettings;
  models: ModelSettings;
}

/** On-device models: where they download from and which one memory search uses. */
export interface ModelSettings {
  /** Base URL of the model host: the Hugging Face hub or a mirror with the same paths (https://hf-mirror.com). */
  host: string;
  /** The catalogue id of the embedding model memory search uses; null = none (search by words only). */
  embedding: string | null;
}

/** How memory reaches the model: passive recall before each turn, and the resident block. */
export interface MemorySettings {
  /** Most memories passive recall injects before a turn. */
  passiveLimit: number;
  /** Hits scoring below this (fused score) are not injected. */
  passiveMinScore: number;
  /** Hits scoring below this fraction of the best hit are not injected. */
  passiveMinRelativeScore: number;
  /** Character budget of the injected block; past it entries shrink to one line, then drop. */
  passiveMaxChars: number;
  /** Skip memories the resident block already carries. */
  passiveExcludeResident: boolean;
  /** Most-referenced memories the resident block carries besides the pinned ones. */
  residentTopN: number;
  /** Weight of recall's vector branch when an embedding model is set; absent or 0 = off (words only). */
  vectorWeight?: number;
}

export interface SelfBlock {
  key: SelfBlockKey;
  content: string;
  isDefault: boolean;
  updatedAt: string;
}

export interface AppInfo {
  version: string;
  mode: 'electron' | 'browser';
  dataDir: string;
  /** How API keys are kept: encrypted by the OS keychain (desktop) or a file only this user can read (browser mode). */
  secretStorage: 'os-encrypted' | 'owner-only-file';
  /** The current sleep day (YYYY-MM-DD) in the configured time zone. */
  sleepDay: string;
  /** Things a person should know that were repaired at start (e.g. an unreadable setting reset to its default). */
  notices: string[];
}

export interface ConnectionTestResult {
  ok: boolean;
  message: string;
  code?: ErrorCode;
  models: string[];
  latencyMs: number;
}

export interface DetectedServer {
  name: string;
  kind: ProviderKind;
  baseUrl: string;
  models: string[];
}

// ---- On-device models ----

export type LocalModelTask = 'embedding' | 'chat';
/** available: nothing on disk; partial: a stopped download that resumes; downloading: now; installed: complete and checked. */
export type LocalModelState = 'available' | 'partial' | 'downloading' | 'installed';

/** A download's progress (the `models.progress` event), at most four a second per model. */
export interface ModelDownloadProgress {
  id: string;
  phase: 'checking' | 'downloading' | 'installing' | 'done';
  /** The file being fetched (path inside the repository). */
  file?: string;
  fileIndex: number;
  fileCount: number;
  /** Bytes on disk for this download, including what earlier attempts left. */
  bytesDone: number;
  bytesTotal: number;
  /** Smoothed over a few seconds; 0 until bytes arrive. */
  bytesPerSecond: number;
  /** null while the speed is unknown. */
  secondsLeft: number | null;
}

/**
 * Where search by meaning stands (the `embeddings.status` event and models.embeddingStatus).
 * off: no model chosen; unavailable: chosen, but this build cannot store vectors or the model would
 * not load (`error` says why); embedding: vectors are being made for what was written before
 * (done/total); ready: every message, memory and diary block has a vector of `model`.
 */
export interface EmbeddingsStatus {
  model: string | null;
  state: 'off' | 'unavailable' | 'embedding' | 'ready';
  done: number;
  total: number;
  /** New messages and memories waiting for their vectors (the queue keeping up; not part of done/total). */
  queued: number;
  /** Recall ranks by meaning too (a model in use and memory.vectorWeight above 0); otherwise vectors only spot repeated memories. */
  searching: boolean;
  error: string | null;
}

/** Why the last download of a model failed, kept until the next attempt. */
export interface LocalModelError extends ApiErrorShape {
  /** For model_disk_full: free bytes on the disk when it was checked… */
  freeBytes?: number;
  /** …and roughly what the download still needed, with the room Anima leaves free. */
  neededBytes?: number;
}

/** A catalogue model with what this computer has of it. */
export interface LocalModel {
  /** Hugging Face id, `org/name`. */
  id: string;
  task: LocalModelTask;
  name: string;
  /** Roughly what it downloads (the host's listing gives the exact size at download time). */
  approxBytes: number;
  /** BCP 47 primary language tags it handles well. */
  languages: string[];
  licence: string;
  /** What it is good for, in English (the UI has its own words for the catalogue's models). */
  goodFor: string;
  /** Offered only to tests (ANIMA_TEST_MODELS=1). */
  testOnly: boolean;
  /** Embedding models: vector length. */
  dimensions: number | null;
  /** Chat models: tokens of context. */
  contextLength: number | null;
  state: LocalModelState;
  /** Set when installed. */
  installed: { bytesOnDisk: number; installedAt: string; host: string } | null;
  /** Bytes of a stopped download waiting to resume (0 when none). */
  partialBytes: number;
  /** The latest progress while downloading. */
  progress: ModelDownloadProgress | null;
  error: LocalModelError | null;
  /** What uses it now: memory search, and on-device model connections (providers) naming it. */
  usedBy: { embeddings: boolean; providers: { id: string; name: string }[] };
}

// ---------------------------------------------------------------------------------------------
// Input schemas — one per method
// ---------------------------------------------------------------------------------------------

const id = z.string().min(1).max(64);
/** 1 MB is the transport limit; a single message may use most of it. */
export const MAX_MESSAGE_CHARS = 200_000;
const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'expected HH:MM (24-hour)');
const empty = z.object({}).strict();
const memoryId = z.number().int().positive();
const isoDate = z.string().refine((v) => !Number.isNaN(Date.parse(v)), 'expected a date (ISO 8601)');
export const MAX_MEMORY_CHARS = 4000;

export const memorySettings = z.object({
  passiveLimit: z.number().int().min(1).max(20),
  passiveMinScore: z.number().min(0).max(1),
  passiveMinRelativeScore: z.number().min(0).max(1),
  passiveMaxChars: z.number().int().min(200).max(20_000),
  passiveExcludeResident: z.boolean(),
  residentTopN: z.number().int().min(0).max(100),
  /** Weight of recall's vector branch when an embedding model is set; absent or 0 = off. */
  vectorWeight: z.number().min(0).max(2).optional(),
});

export const sleepSettings = z.object({
  auto: z.boolean(),
  maxCallsPerNight: z.number().int().min(1).max(10_000),
  maxTokensPerNight: z.number().int().min(1_000).max(100_000_000),
});

/** An http(s) address without credentials in it (the model host, a mirror). */
function isWebAddress(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password;
  } catch {
    return false;
  }
}

/** A catalogue model id: `org/name` as the Hugging Face hub spells them. */
const localModelId = z.string().regex(/^[A-Za-z0-9][\w.-]{0,95}\/[A-Za-z0-9][\w.-]{0,95}$/, 'expected a model id like org/name');

export const modelSettings = z.object({
  host: z
    .string()
    .trim()
    .max(500)
    .refine(isWebAddress, 'expected a web address starting with https:// (or http://), like https://huggingface.co'),
  embedding: localModelId.nullable(),
});

const providerInput = z
  .object({
    id: id.optional(),
    kind: z.enum(PROVIDER_KINDS),
    name: z.string().trim().min(1).max(80),
    baseUrl: z.string().max(500),
    model: z.string().max(200),
    contextTokens: z.number().int().min(512).max(10_000_000).optional(),
    /** undefined: keep the stored key; '': remove it; otherwise the new key. */
    apiKey: z.string().max(500).optional(),
  })
  .strict();

export const inputs = {
  'app.info': empty,

  'settings.get': empty,
  'settings.update': z
    .object({
      chatProviderId: id.nullable().optional(),
      backgroundProviderId: id.nullable().optional(),
      sleepTime: hhmm.optional(),
      timeZone: z.string().min(1).max(64).optional(),
      language: z.enum(['system', 'en', 'zh-CN']).optional(),
      theme: z.enum(['system', 'light', 'dark']).optional(),
      onboarded: z.boolean().optional(),
      passiveRecall: z.boolean().optional(),
      memory: memorySettings.partial().strict().optional(),
      sleep: sleepSettings.partial().strict().optional(),
      models: modelSettings.partial().strict().optional(),
    })
    .strict(),

  'providers.list': empty,
  'providers.save': providerInput,
  'providers.delete': z.object({ id }).strict(),
  /** Test either a saved provider (id) or unsaved form values. */
  'providers.test': providerInput.partial({ name: true }),
  'providers.detect': empty,

  /** The on-device model catalogue with what is downloaded, downloading or waiting to resume. */
  'models.list': empty,
  /** Start (or resume) a download; returns at once. Progress arrives as models.progress, the end as models.changed. */
  'models.download': z.object({ id: localModelId }).strict(),
  /** Stop a download; what arrived is kept and the next download continues from it. */
  'models.cancel': z.object({ id: localModelId }).strict(),
  /** Remove a model's files (and any stopped download of it); memory search stops using it. */
  'models.delete': z.object({ id: localModelId }).strict(),
  /** The embedding model memory search uses; null = none (search by words only). */
  'models.useForEmbeddings': z.object({ id: localModelId.nullable() }).strict(),
  'models.embeddingStatus': empty,

  'self.list': empty,
  'self.update': z.object({ key: z.enum(SELF_BLOCK_KEYS), content: z.string().max(20_000) }).strict(),
  'self.reset': z.object({ key: z.enum(SELF_BLOCK_KEYS) }).strict(),

  'conversations.list': z
    .object({ query: z.string().max(500).optional(), archived: z.boolean().optional() })
    .strict(),
  'conversations.create': z.object({ title: z.string().max(200).optional() }).strict(),
  'conversations.get': z.object({ id }).strict(),
  'conversations.rename': z.object({ id, title: z.string().trim().min(1).max(200) }).strict(),
  'conversations.archive': z.object({ id, archived: z.boolean() }).strict(),

  /** Store the user's message, then stream the reply as chat.* events. */
  'chat.send': z
    .object({ conversationId: id, content: z.string().min(1).max(MAX_MESSAGE_CHARS) })
    .strict(),
  /** Stop the reply being written in this conversation; what arrived is kept as partial. */
  'chat.stop': z.object({ conversationId: id }).strict(),
  /** Write the last reply again (also "retry" after an error). The old reply is kept, marked replaced. */
  'chat.regenerate': z.object({ conversationId: id }).strict(),
  'memories.list': z
    .object({
      query: z.string().max(2000).optional(),
      types: z.array(z.enum(MEMORY_TYPES)).max(6).optional(),
      statuses: z.array(z.enum(MEMORY_STATUSES)).max(3).optional(),
      pinned: z.boolean().optional(),
      limit: z.number().int().min(1).max(200).optional(),
      offset: z.number().int().min(0).optional(),
    })
    .strict(),
  'memories.get': z.object({ id: memoryId }).strict(),
  'memories.create': z
    .object({
      type: z.enum(MEMORY_TYPES),
      content: z.string().trim().min(1).max(MAX_MEMORY_CHARS),
      pinned: z.boolean().optional(),
      validFrom: isoDate.nullable().optional(),
      validTo: isoDate.nullable().optional(),
    })
    .strict(),
  'memories.update': z
    .object({
      id: memoryId,
      type: z.enum(MEMORY_TYPES).optional(),
      content: z.string().trim().min(1).max(MAX_MEMORY_CHARS).optional(),
      validFrom: isoDate.nullable().optional(),
      validTo: isoDate.nullable().optional(),
    })
    .strict(),
  /** Forget: the memory is expired (kept, out of recall) and can be brought back with undo. */
  'memories.forget': z.object({ id: memoryId }).strict(),
  'memories.pin': z.object({ id: memoryId, pinned: z.boolean() }).strict(),
  'memories.reorderPins': z.object({ ids: z.array(memoryId).max(500) }).strict(),
  /** Undo one journal entry (and the rest of its batch). */
  'memories.undo': z.object({ changeId: z.number().int().positive() }).strict(),
  'memories.resident': empty,
  /** The companion's recall over all four sources, as the Memories view's search. */
  'recall.search': z
    .object({
      query: z.string().max(2000),
      sources: z.array(z.enum(RECALL_SOURCES)).max(4).optional(),
      limit: z.number().int().min(1).max(100).optional(),
    })
    .strict(),

  /** The cycle now: running or not, the last run, the next scheduled time, tonight's budget use. */
  'sleep.status': empty,
  /** Start a cycle now for the current sleep day; progress arrives as sleep.progress events. */
  'sleep.now': empty,
  /** Stop the running cycle at the next step boundary (what is done stays done). */
  'sleep.stop': empty,
  'sleep.runs': z.object({ limit: z.number().int().min(1).max(100).optional() }).strict(),
  /** The audit log of background model calls, newest first. */
  'sleep.audit': z
    .object({
      status: z.enum(['ok', 'error', 'invalid']).optional(),
      limit: z.number().int().min(1).max(200).optional(),
      offset: z.number().int().min(0).optional(),
    })
    .strict(),
  'sleep.auditEntry': z.object({ id: z.number().int().positive() }).strict(),
  /** The latest morning digest (or the one of a given sleep day). */
  'sleep.digest': z.object({ day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional() }).strict(),
  /** Accept (pin/unpin as proposed) or dismiss a proposal from deep sleep's pin review. */
  'sleep.resolveProposal': z.object({ id: z.number().int().positive(), accept: z.boolean() }).strict(),
  /** Diary days, newest first; `before` pages back (exclusive). */
  'diary.days': z
    .object({ limit: z.number().int().min(1).max(90).optional(), before: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional() })
    .strict(),
  /** Daily mood from anchors with 7- and 30-day trends, for the last `days` days that have anchors. */
  'diary.mood': z.object({ days: z.number().int().min(1).max(366).optional() }).strict(),
  /** Hide a diary block (a tombstone: the text is kept); hidden: false brings it back. */
  'diary.hide': z.object({ id: z.number().int().positive(), hidden: z.boolean() }).strict(),
  /** Dreams, newest first, with their text. */
  'dreams.list': z.object({ limit: z.number().int().min(1).max(366).optional() }).strict(),

  /** The graph to draw: whole up to 2,000 entities, else the ego graph of `centerId` (default: the most mentioned). */
  'graph.view': z
    .object({
      centerId: z.number().int().positive().optional(),
      hops: z.number().int().min(1).max(3).optional(),
      /** Show the graph as it was then (valid time). */
      at: isoDate.optional(),
      kinds: z.array(z.enum(ENTITY_KINDS)).max(7).optional(),
      limit: z.number().int().min(1).max(20_000).optional(),
    })
    .strict(),
  'graph.search': z.object({ query: z.string().max(200), limit: z.number().int().min(1).max(50).optional() }).strict(),
  'graph.entity': z.object({ id: z.number().int().positive() }).strict(),
  'graph.rename': z.object({ id: z.number().int().positive(), name: z.string().max(500) }).strict(),
  'graph.addAlias': z.object({ id: z.number().int().positive(), alias: z.string().max(500) }).strict(),
  /** "These are the same": `mergeId` becomes part of `keepId` (undoable). */
  'graph.merge': z.object({ keepId: z.number().int().positive(), mergeId: z.number().int().positive() }).strict(),
  'graph.hide': z.object({ id: z.number().int().positive(), hidden: z.boolean() }).strict(),
  'graph.undo': z.object({ changeId: z.number().int().positive() }).strict(),
  /** Load entities and edges through the same resolution as mentions (a fixture, another app's export). */
  'graph.import': z
    .object({
      entities: z.array(z.object({ name: z.string().max(500), kind: z.enum(ENTITY_KINDS), aliases: z.array(z.string().max(500)).max(20).optional() }).strict()).max(20_000),
      edges: z
        .array(
          z
            .object({
              /** Indexes into `entities`. */
              source: z.number().int().min(0),
              target: z.number().int().min(0),
              relation: z.string().min(1).max(60),
              weight: z.number().positive().max(1_000_000).optional(),
              validFrom: isoDate.nullable().optional(),
              validTo: isoDate.nullable().optional(),
            })
            .strict(),
        )
        .max(200_000),
    })
    .strict(),

  /** Replace the last user message with an edited version and answer it again; the old one is kept. */
  'chat.editLast': z
    .object({ conversationId: id, content: z.string().min(1).max(MAX_MESSAGE_CHARS) })
    .strict(),
} as const;

export type ApiMethod = keyof typeof inputs;
export type ApiInput<K extends ApiMethod> = z.input<(typeof inputs)[K]>;

export interface SendResult {
  userMessage: Message;
  /** The reply placeholder (status streaming); its text arrives as chat.delta events. */
  assistantMessage: Message;
}

export interface ApiOutputs {
  'app.info': AppInfo;
  'settings.get': Settings;
  'settings.update': Settings;
  'providers.list': ProviderConfig[];
  'providers.save': ProviderConfig;
  'providers.delete': { ok: true };
  'providers.test': ConnectionTestResult;
  'providers.detect': DetectedServer[];
  'models.list': LocalModel[];
  'models.download': LocalModel;
  'models.cancel': LocalModel;
  'models.delete': LocalModel;
  'models.useForEmbeddings': Settings;
  'models.embeddingStatus': EmbeddingsStatus;
  'self.list': SelfBlock[];
  'self.update': SelfBlock;
  'self.reset': SelfBlock;
  'conversations.list': ConversationSummary[];
  'conversations.create': Conversation;
  'conversations.get': { conversation: Conversation; messages: Message[] };
  'conversations.rename': Conversation;
  'conversations.archive': Conversation;
  'chat.send': SendResult;
  'chat.stop': { stopped: boolean };
  'chat.regenerate': SendResult;
  'chat.editLast': SendResult;
  'memories.list': { items: Memory[]; total: number };
  'memories.get': { memory: Memory; history: MemoryChange[]; /** oldest first: what it superseded, it, what superseded it */ chain: Memory[] };
  'memories.create': SaveMemoryResult;
  'memories.update': SaveMemoryResult;
  'memories.forget': SaveMemoryResult;
  'memories.pin': SaveMemoryResult;
  'memories.reorderPins': Memory[];
  'memories.undo': Memory;
  'memories.resident': ResidentPreview;
  'recall.search': RecallHit[];
  'sleep.status': SleepStatus;
  'sleep.now': { runId: number | null; sleepDay: string };
  'sleep.stop': { stopped: boolean };
  'sleep.runs': SleepRun[];
  'sleep.audit': { items: AuditEntry[]; total: number };
  'sleep.auditEntry': AuditEntryDetail;
  'sleep.digest': SleepDigest | null;
  'sleep.resolveProposal': SleepProposal;
  'diary.days': DiaryDay[];
  'diary.mood': MoodPoint[];
  'diary.hide': DiaryBlock;
  'dreams.list': DiaryBlock[];
  'graph.view': GraphSlice;
  'graph.search': Entity[];
  'graph.entity': EntityDetail;
  'graph.rename': { entity: Entity; changeId: number };
  'graph.addAlias': { entity: Entity; changeId: number };
  'graph.merge': { entity: Entity; changeId: number };
  'graph.hide': { entity: Entity; changeId: number };
  'graph.undo': Entity;
  'graph.import': { entities: number; edges: number };
}

// Compile-time check that every method has an output type and vice versa.
type _SameKeys = [ApiMethod] extends [keyof ApiOutputs]
  ? [keyof ApiOutputs] extends [ApiMethod]
    ? true
    : never
  : never;
const _sameKeys: _SameKeys = true;
void _sameKeys;

/** The whole API as functions: implemented by the host, called through a transport. */
export type AnimaApi = {
  [K in ApiMethod]: (input: ApiInput<K>) => Promise<ApiOutputs[K]>;
};

// ---------------------------------------------------------------------------------------------
// Events (host → renderer)
// ---------------------------------------------------------------------------------------------

export interface ApiEvents {
  /** A piece of the reply being streamed. */
  'chat.delta': { conversationId: string; messageId: string; text: string };
  /** Before the first token, what the reply waits for (an on-device model loading); the first delta ends it. */
  'chat.status': { conversationId: string; messageId: string; status: 'loading_model'; text: string };
  /** The reply ended: complete, partial (stopped) or error. Carries the stored message. */
  'chat.finished': { conversationId: string; message: Message };
  /** A conversation's list entry changed (new message, rename, archive). */
  'conversations.changed': { conversationId: string };
  'settings.changed': Settings;
  /** Passive recall put these memories in front of the model for this reply. */
  'chat.injected': { conversationId: string; messageId: string; memories: Pick<Memory, 'id' | 'type' | 'content'>[] };
  /** Memory changed (by the companion, the person or the sleep cycle); carries the journal entry. */
  'memories.changed': { change: MemoryChange };
  /** A sleep step started or finished. */
  'sleep.progress': SleepProgressEvent;
  /** A cycle ended (done, failed or stopped). */
  'sleep.finished': { runId: number; sleepDay: string; status: Exclude<SleepRunStatus, 'running'>; error: string | null };
  /** Diary blocks were written or hidden. */
  'diary.changed': { day: string | null };
  /** Entities or edges changed (new mentions, an edit, a merge). */
  'graph.changed': { entityIds: number[] };
  /** A model download moved on (at most four a second per model, plus each change of phase). */
  'models.progress': ModelDownloadProgress;
  /** A model was installed, stopped, failed, removed or chosen: the whole list as it is now. */
  'models.changed': { id: string | null; models: LocalModel[] };
  /** Search by meaning changed state or its background embedding moved on (at most twice a second). */
  'embeddings.status': EmbeddingsStatus;
}
export type ApiEventName = keyof ApiEvents;
export const EVENT_NAMES: ApiEventName[] = [
  'chat.delta',
  'chat.finished',
  'conversations.changed',
  'settings.changed',
  'chat.injected',
  'memories.changed',
  'sleep.progress',
  'sleep.finished',
  'diary.changed',
  'graph.changed',
  'models.progress',
  'models.changed',
  'chat.status',
  'embeddings.status',
];

/** What a transport gives the renderer: one typed call and one typed subscription. */
export interface AnimaClient {
  call<K extends ApiMethod>(method: K, input: ApiInput<K>): Promise<ApiOutputs[K]>;
  /** Returns an unsubscribe function. */
  on<E extends ApiEventName>(event: E, listener: (payload: ApiEvents[E]) => void): () => void;
}

/** The error every transport rejects with. */
export class ApiError extends Error implements ApiErrorShape {
  constructor(
    public code: ErrorCode,
    message: string,
    public field?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
  toJSON(): ApiErrorShape {
    return this.field ? { code: this.code, message: this.message, field: this.field } : { code: this.code, message: this.message };
  }
  static from(shape: ApiErrorShape): ApiError {
    return new ApiError(shape.code, shape.message, shape.field);
  }
}

export function isApiMethod(name: string): name is ApiMethod {
  return Object.prototype.hasOwnProperty.call(inputs, name);
}

/** Validate a call's input; throws ApiError('invalid_input') naming the first bad field. */
export function parseInput<K extends ApiMethod>(method: K, raw: unknown): z.output<(typeof inputs)[K]> {
  const result = inputs[method].safeParse(raw ?? {});
  if (result.success) return result.data as z.output<(typeof inputs)[K]>;
  const issue = result.error.issues[0];
  const field = issue?.path.join('.') || undefined;
  const what = field ? `${field}: ${issue?.message}` : issue?.message ?? 'invalid input';
  throw new ApiError('invalid_input', `Invalid input for ${method} — ${what}`, field);
}

/** Transport limits, shared so both sides agree. */
export const MAX_BODY_BYTES = 1024 * 1024;
