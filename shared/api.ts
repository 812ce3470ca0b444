// The one API contract between the renderer and the host.
//
// Every method has a zod schema for its input (the host validates every call: the renderer is
// untrusted input) and a TypeScript type for its output. Three transports carry it unchanged:
// a MessagePort in Electron, HTTP + server-sent events in browser mode, a direct call in tests.
//
// Each domain's types and methods live in shared/api/<domain>.ts; methods.ts ties them into one
// method table. This file is what both sides import: it names the contract's exports (the files
// under shared/api/ also export to each other what is not part of it, such as each domain's table).
export { type ApiErrorShape, ApiError, ERROR_CODES, type ErrorCode } from './api/errors.js';
export type { AnimaClient } from './api/transport.js';
export { MAX_BODY_BYTES } from './api/transport.js';
export { type AnimaApi, type ApiInput, type ApiMethod, type ApiOutputs, inputs, isApiMethod, parseInput } from './api/methods.js';
export { type ApiEventName, type ApiEvents, EVENT_NAMES } from './api/events.js';

export type { AppInfo } from './api/app.js';
export type { ExtensionState, StorageProbe, StorageStatus } from './api/storage.js';
export type { Device, DevicesList, DevicesListening, PairingStart, PairResult } from './api/devices.js';
export { MAX_DEVICE_NAME_CHARS, OWNER_ONLY_METHODS, PAIRING_SECRET_MS, pairRequest } from './api/devices.js';
export type { ArchiveExportState, ArchiveExportStatus } from './api/archive.js';
export type { VaultChange, VaultChangeKind, VaultProblem, VaultProblemReason, VaultSettings, VaultState, VaultSyncReport } from './api/vault.js';
export type { Language, MemorySettings, ModelSettings, Settings, SleepSettings, Theme } from './api/settings.js';
export { memorySettings, modelSettings, sleepSettings } from './api/settings.js';
export { type ConnectionTestResult, type DetectedServer, PROVIDER_KINDS, type ProviderConfig, type ProviderKind } from './api/providers.js';
export type { EmbeddingsStatus, LocalModel, LocalModelError, LocalModelState, LocalModelTask, ModelDownloadProgress } from './api/models.js';
export { SELF_BLOCK_KEYS, type SelfBlock, type SelfBlockKey } from './api/self.js';
export type {
  Conversation,
  ConversationSummary,
  DeleteResult,
  Message,
  MessageRole,
  MessageStatus,
  SendResult,
  TrashedConversation,
} from './api/conversations.js';
export { MAX_MESSAGE_CHARS, TRASH_DAYS } from './api/conversations.js';
export type { ImageRef, ImageType } from './api/attachments.js';
export { IMAGE_CHUNK_BYTES, IMAGE_ID_PATTERN, IMAGE_TYPES, MAX_IMAGE_BYTES, MAX_IMAGE_SIDE, MAX_IMAGES_PER_MESSAGE, seesImages } from './api/attachments.js';
export type {
  Memory,
  MemoryActor,
  MemoryChange,
  MemoryReason,
  MemorySource,
  MemoryStatus,
  MemoryType,
  RecallHit,
  RecallLink,
  RecallSource,
  ResidentPreview,
  SaveMemoryResult,
} from './api/memory.js';
export { MAX_MEMORY_CHARS, MEMORY_STATUSES, MEMORY_TYPES, RECALL_SOURCES } from './api/memory.js';
export type {
  AuditEntry,
  AuditEntryDetail,
  DigestChange,
  ImportedHistoryState,
  ImportedHistoryStatus,
  SleepBudgetUse,
  SleepDigest,
  SleepProgressEvent,
  SleepProposal,
  SleepRun,
  SleepRunStatus,
  SleepStatus,
  SleepStepId,
  SleepStepInfo,
  SleepStepStatus,
  SleepTrigger,
} from './api/sleep.js';
export { SLEEP_STEP_IDS } from './api/sleep.js';
export { DIARY_KINDS, type DiaryBlock, type DiaryDay, type DiaryKind, type Mood, type MoodPoint } from './api/diary.js';
export { ENTITY_KINDS, type Entity, type EntityChange, type EntityDetail, type EntityEdge, type EntityKind, type GraphSlice } from './api/graph.js';
export type {
  AppliedCardResult,
  ImportArchivePart,
  ImportArchivePreview,
  ImportCardPreview,
  ImportFormatName,
  ImportPreview,
  ImportProgress,
  ImportState,
} from './api/imports.js';
export { IMPORT_ARCHIVE_PARTS, IMPORT_CHUNK_BYTES, IMPORT_FORMATS, MAX_IMPORT_BYTES } from './api/imports.js';
