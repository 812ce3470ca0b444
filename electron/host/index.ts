// The composition root: open the data folder, build the services, start what runs in the
// background, and expose the API — one handler module per domain (handlers/).
import fs from 'node:fs';
import { ApiError, isApiMethod, parseInput, type AnimaApi, type ApiMethod } from '../../shared/api.js';
import type { Log } from '../../shared/log.js';
import { ChatEngine } from '../agent/chat.js';
import { AttachmentStore, attachmentsDir } from '../attachments/store.js';
import { exportsDir } from '../archive/exports.js';
import { BackupService } from '../backups/service.js';
import { EraseEverything, finishInterruptedErase } from '../backups/erase.js';
import { createTurnMemory } from '../agent/memory-turn.js';
import { SelfLayer } from '../companion/self-layer.js';
import { restoreAvatar } from '../companion/avatar.js';
import { Conversations } from '../conversations/conversations.js';
import { Devices } from '../devices/devices.js';
import { TranscriptImports } from '../conversations/import-transcript.js';
import { chosenDatabaseUrl, chosenServerFailed } from '../db/choice.js';
import { acquireLock } from '../db/lock.js';
import { backgroundConnection, onLockRetaken, reconnectIfLost } from '../db/database.js';
import { openDatabase, type Database } from '../db/open.js';
import { VectorSlot } from '../embed/active.js';
import { SearchByMeaning } from '../embed/search-by-meaning.js';
import { HostEvents, type HostEventListener } from '../events/events.js';
import { Trash } from '../forgetting/trash.js';
import { batchedEntityChanges, GraphIndexer } from '../graph/indexer.js';
import { ImportService } from '../imports/apply-service.js';
import { EntityStore } from '../graph/store.js';
import { unloadLocalModel } from '../llm/local.js';
import { Recall } from '../memory/recall/index.js';
import { MemoryStore } from '../memory/store.js';
import { LocalModels, type HostModelOptions } from '../models/local-models.js';
import { modelsDir, Providers } from '../providers/providers.js';
import { OwnerOnlyFileSecretStore } from '../settings/secrets.js';
import { SettingsStore } from '../settings/settings.js';
import { HistoryReader } from '../sleep/history.js';
import { markImportedHistoryRead } from '../sleep/imported-history.js';
import { Napper } from '../sleep/nap.js';
import { SleepService } from '../sleep/service.js';
import { VaultService } from '../vault/service.js';
import { createHandlers, type HostServices } from './handlers/index.js';
import type { Host, HostOptions } from './types.js';
import { appVersion } from './version.js';

export type { Host, HostOptions } from './types.js';
export type { HostModelOptions } from '../models/local-models.js';

const defaultLog: Log = (level, message) => {
  const line = `[anima ${level}] ${message}`;
  if (level === 'error') console.error(line);
  else if (level === 'warn') console.warn(line);
  else if (process.env.ANIMA_DEBUG) console.log(line);
};

export async function createHost(options: HostOptions & HostModelOptions): Promise<Host> {
  const log = options.log ?? defaultLog;
  const dataDir = options.dataDir;
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const lock = acquireLock(dataDir, (previous) =>
    log('warn', `taking over a stale lock${previous ? ` left by process ${previous.pid}` : ''} (it is no longer running)`),
  );
  let db: Database;
  let database = options.database;
  try {
    // An "Erase everything" killed part way is finished (or dropped, if its switch never began) first.
    finishInterruptedErase(dataDir, log);
    // Settings → Data → Storage: the server this folder chose, unless the start named a database.
    database ??= await chosenDatabaseUrl(dataDir, options.secrets ?? new OwnerOnlyFileSecretStore(dataDir));
    db = await openDatabase(dataDir, { template: options.template, database }).catch((err: unknown) => {
      if (options.database !== undefined || database === undefined) throw err;
      throw chosenServerFailed(dataDir, err);
    });
  } catch (err) {
    lock.release();
    throw err;
  }
  // Transports subscribe here; each generation of services (a restore opens a new one) is forwarded.
  const bus = new HostEvents();
  const forward = (...args: Parameters<HostEventListener>) => (bus.emit as (...a: Parameters<HostEventListener>) => void)(...args);
  // A restore swaps the database folder: the services close, the folders are renamed (backups/switch.ts),
  // and everything is built again on the restored data; calls made meanwhile wait for it.
  let switching: Promise<unknown> | undefined;
  const switchData = (swap: () => void, revert: () => void): Promise<BackupService> => {
    const run = (async () => {
      // Revocations outlive a restore to an older copy (electron/devices/devices.ts).
      const devicesBefore = await devices.snapshot().catch(() => ({ active: [], revoked: [] }));
      await closeGeneration();
      unforward();
      let reverted = false;
      try {
        swap();
      } catch (err) {
        log('error', `restore: the switch stopped part way (${(err as Error).message}); it is finished from its journal`);
      }
      try {
        db = await openDatabase(dataDir, { database });
      } catch (err) {
        log('error', `restore: the restored data would not open (${(err as Error).message}); putting the data from before it back`);
        revert();
        reverted = true;
        db = await openDatabase(dataDir, { database });
      }
      s = buildServices(db, options, log, switchData, devices);
      await devices.afterRestore(devicesBefore).catch((err: Error) => log('warn', `restore: the paired devices were not brought up to date: ${err.message}`));
      unforward = s.events.on(forward);
      await startServices(s);
      handlers = createHandlers(s);
      if (reverted) throw new ApiError('internal', 'The restored copy would not open after the switch; your data from before the restore is back.');
      return s.backups;
    })();
    switching = run.catch(() => {}).finally(() => (switching = undefined));
    return run;
  };
  // Paired devices outlive a restore (the pairing secret, the LAN listener's address): they read the current database.
  const devices = new Devices({ db: () => db, events: bus, now: options.now });
  let s = buildServices(db, options, log, switchData, devices);
  let unforward = s.events.on(forward);
  await startServices(s);
  const closeGeneration = async () => {
    // Stopped downloads keep their partial files; the next start continues from them.
    await s.localModels.close();
    await s.backups.close();
    await s.imports.close();
    await s.sleep.close();
    await s.history.close();
    await s.chat.stopAll();
    await s.napper.close();
    await s.trash.close();
    await s.vault.close();
    await s.graphIndexer.close();
    await s.meaning.close();
    await db.close();
  };

  // Every call is validated here, once, whatever transport brought it: the renderer is untrusted input.
  let handlers = createHandlers(s);
  const api = Object.fromEntries(
    (Object.keys(handlers) as ApiMethod[]).map((method) => [
      method,
      (raw: unknown) => {
        const input = parseInput(method, raw);
        const handle = () => (handlers[method] as (i: unknown) => Promise<unknown>)(input);
        // PostgreSQL after a dropped connection: made again (the lock retaken, stale caches dropped) before the handler reads any of them.
        const call = () => reconnectIfLost(db)?.then(handle) ?? handle();
        return switching ? switching.then(call) : call();
      },
    ]),
  ) as AnimaApi;

  let closing: Promise<void> | undefined;
  return {
    api,
    dataDir,
    exportsDir: exportsDir(dataDir),
    devices,
    async call(method: string, input: unknown) {
      if (!isApiMethod(method)) throw new ApiError('unknown_method', `There is no API method called “${method}”.`);
      if (closing) throw new ApiError('conflict', 'Anima is shutting down.');
      return (api[method as ApiMethod] as (i: unknown) => Promise<unknown>)(input);
    },
    on: (listener) => bus.on(listener),
    close() {
      closing ??= (async () => {
        await switching;
        await closeGeneration();
        lock.release();
      })();
      return closing;
    },
  };
}

/** Every service, wired to what it really uses. Nothing here touches the database yet. */
function buildServices(
  db: Database,
  options: HostOptions & HostModelOptions,
  log: Log,
  switchData: (swap: () => void, revert: () => void) => Promise<BackupService>,
  devices: Devices,
): HostServices & { graphIndexer: GraphIndexer } {
  const { dataDir } = options;
  const now = options.now ?? (() => new Date());
  const notices: string[] = [];
  const notice = (message: string) => {
    notices.push(message);
    log('warn', message);
  };
  const events = new HostEvents();
  const secrets = options.secrets ?? new OwnerOnlyFileSecretStore(dataDir, notice);
  const settings = new SettingsStore(db, notice, (next) => events.emit('settings.changed', next));
  const selfLayer = new SelfLayer(db);
  // Search by meaning: the chosen on-device model embeds every stored message and memory in the
  // background and is put in the vector slot recall and the memory store read; without one (the
  // default) memory search is by words alone.
  const vectors = new VectorSlot();
  const meaning = new SearchByMeaning({
    db,
    vectors,
    modelsDir: modelsDir(dataDir),
    events,
    log,
    fetch: options.fetch,
    // A server's embedding model: the connection as saved, with its key.
    connection: (id) => providers.withKey(id),
    updateSettings: (patch) => settings.update(patch),
  });
  const recall = new Recall({ db, vectors });
  const conversations = new Conversations(
    db,
    (message) => {
      graphIndexer.message(message.id);
      meaning.messageStored(message);
    },
    log,
  );
  const providers = new Providers(db, secrets, {
    fetch: options.fetch,
    timeoutMs: options.providerTimeoutMs,
    modelsDir: modelsDir(dataDir),
    localServers: options.localServers,
  });
  // On-device models: downloads into <dataDir>/models, where the local chat provider and the embedder read them.
  const localModels = new LocalModels({
    modelsDir: modelsDir(dataDir),
    settings,
    events,
    providers: () => providers.list(),
    unloadChatModel: unloadLocalModel,
    log,
    freeBytes: options.freeBytes,
    options: options.models,
  });
  const memories = new MemoryStore(
    db,
    (change) => {
      events.emit('memories.changed', { change });
      graphIndexer.memoryChanged(change);
      meaning.memoryChanged(change);
    },
    log,
    vectors,
  );
  // The entity graph grows from every stored message and memory, recorded right after each write
  // (the two stores above report to its indexer; it reads their rows through them).
  const graph = new EntityStore(
    db,
    { conversations, memories },
    log,
    batchedEntityChanges((entityIds) => events.emit('graph.changed', { entityIds })),
    backgroundConnection(db),
  );
  const graphIndexer = new GraphIndexer(db, graph, log);
  const memory = createTurnMemory({ db, store: memories, recall, settings, conversations, events, log });
  // Daytime memory: a quiet or left conversation, or one outgrowing the context window, is napped.
  const napper = new Napper({ db, providers, settings, selfLayer, now, conversations, store: memories, log });
  // Images attached to messages: files in <dataDir>/attachments, their references on the message rows.
  const attachments = new AttachmentStore(attachmentsDir(dataDir));
  const chat = new ChatEngine({ conversations, providers, settings, selfLayer, events, memory, daytime: napper, attachments, now, log });
  const sleepDeps = {
    db,
    dataDir,
    store: memories,
    conversations,
    recall,
    vectors,
    graph,
    settings,
    providers,
    selfLayer,
    events,
    now,
    log,
    freeBytes: options.freeBytes,
  };
  const sleep = new SleepService(sleepDeps, options.sleep);
  const transcripts = new TranscriptImports(db, now);
  // "Read my imported history": the catch-up over imported days, when the person asks and the app is quiet.
  const history = new HistoryReader({ ...sleepDeps, transcripts }, options.history);
  // Other apps' exports: one transaction per conversation, its messages marked read by the sleep
  // cycle in that transaction; the graph and the embedder hear of them as of any stored message.
  const imports = new ImportService({
    transcripts,
    markRead: markImportedHistoryRead,
    onStored: (ids) => {
      for (const id of ids) {
        graphIndexer.message(id);
        meaning.messageStored({ id });
      }
    },
    selfLayer,
    events,
    now,
    log,
    // Anima's own archive: every room's rows in one transaction; then recall reads its tables afresh,
    // the embedder finds what has no vector yet (memories and diary blocks as well as messages) and
    // the graph indexer what has no mentions yet.
    archive: {
      db,
      settings,
      images: attachments,
      restoreAvatar: (name, bytes) => restoreAvatar(dataDir, name, bytes),
      afterRestore: () => {
        recall.drop();
        meaning.catchUp();
        graphIndexer.catchUp();
      },
    },
  });
  // Deleting a conversation reaches every room that derived something from it; the purge runs at start and daily.
  const trash = new Trash({
    db,
    conversations,
    memories,
    graph,
    graphIdle: () => graphIndexer.idle(),
    dropRecallIndex: () => recall.drop(),
    embedCatchUp: () => meaning.catchUp(),
    removeUnusedImages: async () => attachments.removeUnreferenced(await conversations.imageIdsInUse(), now().getTime()),
    now,
    log,
  });
  // Safety copies, the person's backup folder with its schedule, and restore (which swaps the data under this host).
  const backups = new BackupService(
    { db, dataDir, settings, events, log, now, version: appVersion(), switchData, freeBytes: options.freeBytes },
    options.backups,
  );
  // "Erase everything": a fresh database swapped in the way a restore swaps, then the old data removed.
  const erase = new EraseEverything({ dataDir, settings, backups, log, now, template: options.template, switchData });
  // The vault folder both ways: the person's memory files read back through the store, then written to match.
  const vault = new VaultService({ db, memories, settings, events, dataDir, now, log, auto: options.vaultAuto !== false });
  // PostgreSQL: the connection dropped and the host lock was taken again. Another Anima may have opened
  // the database meanwhile, written and closed: what is held in memory from the tables is read afresh.
  onLockRetaken(db, () => {
    log('warn', 'the connection to the PostgreSQL server was made again: the recall index and the settings are read afresh');
    recall.drop();
    void settings.reload().catch((err: Error) => log('warn', `settings: could not read them again: ${err.message}`));
    meaning.catchUp();
    graphIndexer.catchUp();
  });
  return {
    version: appVersion(),
    dataDir,
    mode: options.mode ?? 'browser',
    notices,
    detectLocalServers: options.detectLocalServers !== false,
    now,
    log,
    db,
    databaseFixed: options.database !== undefined,
    events,
    secrets,
    settings,
    providers,
    localModels,
    meaning,
    selfLayer,
    conversations,
    memories,
    recall,
    graph,
    graphIndexer,
    chat,
    attachments,
    napper,
    sleep,
    history,
    backups,
    erase,
    imports,
    trash,
    vault,
    devices,
    browserLink: options.browserLink,
  };
}

/** Brings the data up to date after a crash and starts the background work. */
async function startServices(s: HostServices & { graphIndexer: GraphIndexer }): Promise<void> {
  await s.selfLayer.ensureDefaults();
  s.meaning.start(await s.settings.get());
  // Build the recall index in the background: the first search would otherwise pay for it.
  void s.recall.warm().catch((err: Error) => s.log('warn', `recall index warm-up failed: ${err.message}`));
  const recovered = await s.conversations.recoverInterrupted();
  if (recovered) s.log('info', `kept ${recovered} interrupted repl${recovered === 1 ? 'y' : 'ies'} as partial`);
  // Messages and memories written before the graph existed, or queued when the app last closed.
  s.graphIndexer.start();
  const abandoned = await s.sleep.recover();
  if (abandoned.length) s.log('info', `sleep: run ${abandoned.join(', ')} was interrupted (its process is gone); the next cycle resumes it`);
  // The scheduler: a catch-up cycle once the app is idle, then the nightly one.
  s.sleep.start();
  s.history.start();
  s.napper.start();
  s.backups.start();
  s.trash.start();
  s.vault.start();
}
