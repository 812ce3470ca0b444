// The events the host sends the renderer, with their payloads.
import type { ArchiveExportStatus } from './archive.js';
import type { BackupProgress } from './backups.js';
import type { Message } from './conversations.js';
import type { ImportProgress } from './imports.js';
import type { Memory, MemoryChange } from './memory.js';
import type { EmbeddingsStatus, LocalModel, ModelDownloadProgress } from './models.js';
import type { Settings } from './settings.js';
import type { ImportedHistoryStatus, SleepProgressEvent, SleepRunStatus } from './sleep.js';
import type { VaultState } from './vault.js';

export interface ApiEvents {
  /** A piece of the reply being streamed. */
  'chat.delta': { conversationId: string; messageId: string; text: string };
  /**
   * Before the first token, what the reply waits for — an on-device model loading, or a model the
   * server is loading (Ollama loads one on its first request); the first delta ends it.
   */
  'chat.status': { conversationId: string; messageId: string; status: 'loading_model' | 'loading_server_model'; text: string };
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
  /** The imported-history catch-up moved on: started, paused, a pass read some days, finished. */
  'sleep.history': ImportedHistoryStatus;
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
  /** An export moved on (at most four a second, plus every change of state: the last says how it ended). */
  'archive.progress': ArchiveExportStatus;
  /** An import moved on (at most four a second, plus every change of state: the last carries how it ended). */
  'imports.progress': ImportProgress;
  /** A safety copy being written or a restore under way moved on (each phase). */
  'backups.progress': BackupProgress;
  /** A device was paired, renamed or revoked (Settings → Devices reads the list again). */
  'devices.changed': { deviceId: string };
  /** A vault sync ended or failed — Sync now, a preview, or one in the background (at start, after a night): the state as it is now. */
  'vault.changed': VaultState;
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
  'sleep.history',
  'diary.changed',
  'graph.changed',
  'models.progress',
  'models.changed',
  'chat.status',
  'embeddings.status',
  'archive.progress',
  'imports.progress',
  'backups.progress',
  'devices.changed',
  'vault.changed',
];
