// What every sleep step may use. One object, built by the sleep service, so a step's dependencies
// are visible in one place and tests can build the same thing on a temporary database.
import type { SelfLayer } from '../../companion/self-layer.js';
import type { Database } from '../../db/open.js';
import { batchedEntityChanges } from '../../graph/indexer.js';
import { EntityStore } from '../../graph/store.js';
import type { HostEvents } from '../../events/events.js';
import type { Providers } from '../../providers/providers.js';
import type { SettingsStore } from '../../settings/settings.js';
import type { MemoryStore } from '../../memory/store.js';
import { BackgroundModel } from '../background.js';
import type { StepContext } from '../dag.js';

export type Log = (level: 'info' | 'warn' | 'error', message: string) => void;

export interface SleepStepDeps {
  db: Database;
  dataDir: string;
  store: MemoryStore;
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
  /** The entity graph (typed relations, profiles); by default one of its own on `db` (graphOf). */
  graph?: EntityStore;
}

const graphs = new WeakMap<SleepStepDeps, EntityStore>();

/**
 * The entity graph the steps write relations and profile links to: `deps.graph`, else one store on
 * the same database, shared by the steps of this deps object, telling the views through 'graph.changed'.
 */
export function graphOf(deps: SleepStepDeps): EntityStore {
  if (deps.graph) return deps.graph;
  let graph = graphs.get(deps);
  if (!graph) {
    graph = new EntityStore(deps.db, deps.log, batchedEntityChanges((entityIds) => deps.events.emit('graph.changed', { entityIds })));
    graphs.set(deps, graph);
  }
  return graph;
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
