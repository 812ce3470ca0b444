// What every sleep step may use. One object, built by the sleep service, so a step's dependencies
// are visible in one place and tests can build the same thing on a temporary database.
import type { SelfLayer } from '../../companion/self-layer.js';
import type { Conversations } from '../../conversations/conversations.js';
import type { Database } from '../../db/open.js';
import type { VectorSlot } from '../../embed/active.js';
import type { EntityStore } from '../../graph/store.js';
import type { HostEvents } from '../../events/events.js';
import type { Providers } from '../../providers/providers.js';
import type { SettingsStore } from '../../settings/settings.js';
import type { Recall } from '../../memory/recall/index.js';
import type { MemoryStore } from '../../memory/store.js';
import { BackgroundModel } from '../background.js';
import type { StepContext } from '../dag.js';

export type Log = (level: 'info' | 'warn' | 'error', message: string) => void;

export interface SleepStepDeps {
  db: Database;
  dataDir: string;
  store: MemoryStore;
  /** The transcript: light sleep and the scheduler read the chat past light sleep's watermarks. */
  conversations: Conversations;
  /** The host's recall: deep sleep's neighbours are what the companion itself would find. */
  recall: Recall;
  /** The embedding model in use, for deep sleep's merge candidates by meaning; empty: none. */
  vectors: VectorSlot;
  /** The host's entity graph: typed relations and profile links are written where the Graph view reads. */
  graph: EntityStore;
  settings: SettingsStore;
  providers: Providers;
  selfLayer: SelfLayer;
  events: HostEvents;
  now: () => Date;
  log: Log;
  /** Free bytes on the data folder's disk (replaceable in tests of a full disk). */
  freeBytes?: (dir: string) => number;
  /** Snapshots kept; default 7. */
  keepSnapshots?: number;
  /** Milliseconds since the person last chatted (a monotonic clock); Infinity when they have not. */
  quietForMs?: () => number;
  /** How long the snapshot waits for a quiet moment before leaving it (and deep sleep) to the next night. Default 60 s. */
  snapshotWaitMs?: number;
}

/**
 * The background model for a run, opened on first use and shared by the run's steps (one identity
 * preamble, one provider resolution). A run that never needs the model never needs a connection.
 */
export function modelForRun(deps: SleepStepDeps): (ctx: StepContext) => Promise<BackgroundModel> {
  const open = new Map<number, Promise<BackgroundModel>>();
  return (ctx) => {
    let model = open.get(ctx.runId);
    if (!model) {
      model = BackgroundModel.open(deps, ctx.sleepDay);
      // Forget a failed open (no connection yet), so the next step or run tries again.
      model.catch(() => open.delete(ctx.runId));
      open.set(ctx.runId, model);
    }
    return model;
  };
}

export { localStamp } from '../../../shared/sleep-day.js';
