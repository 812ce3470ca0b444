// The composition root: open the data folder, wire the services, expose the API.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import {
  ApiError,
  isApiMethod,
  parseInput,
  type AnimaApi,
  type ApiMethod,
  type ApiOutputs,
  type inputs,
} from '../../shared/api.js';
import type { z } from 'zod';
import { isValidTimeZone, sleepDay } from '../../shared/sleep-day.js';
import { ChatEngine } from '../agent/chat.js';
import { createTurnMemory } from '../agent/memory-turn.js';
import { Recall } from '../memory/recall/index.js';
import { VectorSlot } from '../embed/active.js';
import { buildResident } from '../memory/resident.js';
import { MemoryStore } from '../memory/store.js';
import { SelfLayer } from '../companion/self-layer.js';
import { acquireLock } from '../db/lock.js';
import { batchedEntityChanges, GraphIndexer } from '../graph/indexer.js';
import { EntityStore } from '../graph/store.js';
import { openDatabase } from '../db/open.js';
import { unloadLocalModel } from '../llm/local.js';
import { auditEntry, auditLog, diaryDays, digest, dreams, hideBlock, moodSeries, proposal, setProposalStatus, sleepRuns } from '../sleep/read.js';
import { SleepService } from '../sleep/service.js';
import { rebuildMoodDays } from '../sleep/steps/simple.js';
import { Conversations } from '../conversations/conversations.js';
import { SearchByMeaning } from '../embed/search-by-meaning.js';
import { HostEvents } from '../events/events.js';
import { LocalModels, type HostModelOptions } from '../models/local-models.js';
import { modelsDir, Providers } from '../providers/providers.js';
import { OwnerOnlyFileSecretStore } from '../settings/secrets.js';
import { SettingsStore } from '../settings/settings.js';
import type { Host, HostOptions } from './types.js';

export type { Host, HostOptions } from './types.js';
export type { HostModelOptions } from '../models/local-models.js';

/** The Graph view draws the whole graph up to this many entities (cytoscape stays interactive there). */
const WHOLE_GRAPH_LIMIT = 2_000;

/** The typed handler map: each method receives its already-validated input. */
type Handlers = { [K in ApiMethod]: (input: z.output<(typeof inputs)[K]>) => Promise<ApiOutputs[K]> };

function appVersion(): string {
  try {
    return (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
  } catch {
    // Bundled builds sit elsewhere; the launcher passes the version through the environment.
    return process.env.ANIMA_VERSION ?? '0.0.0';
  }
}

const defaultLog: NonNullable<HostOptions['log']> = (level, message) => {
  const line = `[anima ${level}] ${message}`;
  if (level === 'error') console.error(line);
  else if (level === 'warn') console.warn(line);
  else if (process.env.ANIMA_DEBUG) console.log(line);
};

export async function createHost(options: HostOptions & HostModelOptions): Promise<Host> {
  const log = options.log ?? defaultLog;
  const now = options.now ?? (() => new Date());
  const dataDir = options.dataDir;
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });

  const notices: string[] = [];
  const notice = (message: string) => {
    notices.push(message);
    log('warn', message);
  };

  const lock = acquireLock(dataDir, (previous) =>
    log('warn', `taking over a stale lock${previous ? ` left by process ${previous.pid}` : ''} (it is no longer running)`),
  );
  let db;
  try {
    db = await openDatabase(dataDir, { template: options.template });
  } catch (err) {
    lock.release();
    throw err;
  }

  const events = new HostEvents();
  const secrets = options.secrets ?? new OwnerOnlyFileSecretStore(dataDir, notice);
  const settings = new SettingsStore(db, notice);
  const selfLayer = new SelfLayer(db);
  // The entity graph grows from every stored message and memory, recorded right after each write.
  const graph = new EntityStore(db, log, batchedEntityChanges((entityIds) => events.emit('graph.changed', { entityIds })));
  const graphIndexer = new GraphIndexer(db, graph, log);
  // Search by meaning: the chosen on-device model embeds every stored message and memory in the
  // background; without one (the default) memory search is by words alone.
  const vectors = new VectorSlot();
  const meaning = new SearchByMeaning({ db, vectors, modelsDir: modelsDir(dataDir), events, log });
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
  const memory = createTurnMemory({ db, store: memories, recall, settings, conversations, events, log });
  const chat = new ChatEngine({ conversations, providers, settings, selfLayer, events, memory, now, log });

  const sleep = new SleepService(
    { db, dataDir, store: memories, recall, vectors, graph, settings, providers, selfLayer, events, now, log, freeBytes: options.freeBytes },
    options.sleep,
  );

  await selfLayer.ensureDefaults();
  const started = await settings.get();
  // Every path that changes settings (the API, a model deleted, the models card) announces it here.
  events.on((event, payload) => {
    if (event === 'settings.changed') {
      meaning.setVectorWeight(payload.memory.vectorWeight);
      void meaning.use(payload.models.embedding);
    }
    // Diary blocks written by the night are embedded once it is over.
    if (event === 'sleep.finished') meaning.catchUp();
    // The chosen model downloaded again after it would not load: try it again.
    if (event === 'models.changed' && payload.models.some((m) => m.id === meaning.chosen && m.state === 'installed') && meaning.status().state === 'unavailable') {
      void meaning.use(meaning.chosen, { retry: true });
    }
  });
  meaning.setVectorWeight(started.memory.vectorWeight);
  // Loads in the background: the first searches run on words until the model is ready.
  void meaning.use(started.models.embedding);
  // Build the recall index in the background: the first search would otherwise pay for it.
  void recall.warm().catch((err: Error) => log('warn', `recall index warm-up failed: ${err.message}`));
  const recovered = await conversations.recoverInterrupted();
  if (recovered) log('info', `kept ${recovered} interrupted repl${recovered === 1 ? 'y' : 'ies'} as partial`);
  // Messages and memories written before the graph existed, or queued when the app last closed.
  graphIndexer.start();
  const abandoned = await sleep.recover();
  if (abandoned.length) log('info', `sleep: run ${abandoned.join(', ')} was interrupted (its process is gone); the next cycle resumes it`);
  // The scheduler: a catch-up cycle once the app is idle, then the nightly one.
  sleep.start();

  const handlers: Handlers = {
    'app.info': async () => {
      const s = await settings.get();
      return {
        version: appVersion(),
        mode: options.mode ?? 'browser',
        dataDir,
        secretStorage: secrets.kind,
        sleepDay: sleepDay(now(), s.sleepTime, s.timeZone),
        notices: [...notices],
      };
    },

    'settings.get': () => settings.get(),
    'settings.update': async (input) => {
      const patch = input;
      if (patch.timeZone !== undefined && !isValidTimeZone(patch.timeZone)) {
        throw new ApiError('invalid_input', `“${patch.timeZone}” is not a time zone I know.`, 'timeZone');
      }
      for (const field of ['chatProviderId', 'backgroundProviderId'] as const) {
        const id = patch[field];
        if (id) await providers.get(id).catch(() => {
          throw new ApiError('invalid_input', 'That model connection does not exist.', field);
        });
      }
      if (patch.models?.embedding !== undefined) await localModels.checkEmbeddingChoice(patch.models.embedding, 'models.embedding');
      if (patch.models?.host !== undefined) patch.models.host = patch.models.host.replace(/\/+$/, '');
      const before = (await settings.get()).models.embedding;
      const next = await settings.update(patch);
      events.emit('settings.changed', next);
      if (next.models.embedding !== before) void localModels.changed(next.models.embedding ?? before);
      return next;
    },

    'providers.list': () => providers.list(),
    'providers.save': async (input) => {
      const saved = await providers.save(input);
      // The first connection a person makes is the one they mean to chat with.
      const s = await settings.get();
      if (!s.chatProviderId) events.emit('settings.changed', await settings.update({ chatProviderId: saved.id }));
      return saved;
    },
    'providers.delete': async (input) => {
      const { id } = input;
      await providers.delete(id);
      const s = await settings.get();
      const patch: { chatProviderId?: null; backgroundProviderId?: null } = {};
      if (s.chatProviderId === id) patch.chatProviderId = null;
      if (s.backgroundProviderId === id) patch.backgroundProviderId = null;
      if (Object.keys(patch).length) events.emit('settings.changed', await settings.update(patch));
      return { ok: true as const };
    },
    'providers.test': (input) => providers.test(input),
    'providers.detect': async () => (options.detectLocalServers === false ? [] : providers.detect()),

    'models.list': () => localModels.list(),
    'models.download': (input) => localModels.download(input.id),
    'models.cancel': (input) => localModels.cancel(input.id),
    'models.delete': (input) => localModels.delete(input.id),
    'models.useForEmbeddings': (input) => localModels.useForEmbeddings(input.id),
    'models.embeddingStatus': async () => meaning.status(),

    'self.list': () => selfLayer.list(),
    'self.update': async (input) => {
      const { key, content } = input;
      return selfLayer.update(key, content);
    },
    'self.reset': async (input) => selfLayer.reset(input.key),

    'conversations.list': (input) => conversations.list(input),
    'conversations.create': async (input) => {
      const created = await conversations.create(input.title);
      events.emit('conversations.changed', { conversationId: created.id });
      return created;
    },
    'conversations.get': async (input) => {
      const { id } = input;
      return { conversation: await conversations.get(id), messages: await conversations.messages(id) };
    },
    'conversations.rename': async (input) => {
      const { id, title } = input;
      const renamed = await conversations.rename(id, title);
      events.emit('conversations.changed', { conversationId: id });
      return renamed;
    },
    'conversations.archive': async (input) => {
      const { id, archived } = input;
      const changed = await conversations.archive(id, archived);
      events.emit('conversations.changed', { conversationId: id });
      return changed;
    },

    'memories.list': async (input) => {
      if (!input.query?.trim()) return memories.list(input);
      // Searching uses the companion's own recall, so the person sees what it would find.
      const hits = await recall.semantic({ query: input.query, types: input.types, limit: input.limit ?? 50 });
      const ids = hits.flatMap((h) => (h.link.kind === 'memory' ? [h.link.memoryId] : []));
      const found = new Map((await memories.getMany(ids)).map((m) => [m.id, m]));
      const items = ids.flatMap((id) => (found.has(id) ? [found.get(id)!] : [])).filter((m) => input.pinned === undefined || m.pinned === input.pinned);
      return { items, total: items.length };
    },
    'memories.get': (input) => memories.get(input.id),
    'memories.create': (input) =>
      memories.create({
        type: input.type,
        content: input.content,
        pinned: input.pinned,
        validFrom: input.validFrom,
        validTo: input.validTo,
        source: 'user',
        actor: 'person',
      }),
    'memories.update': ({ id, ...patch }) => memories.update(id, patch, 'person'),
    'memories.forget': (input) => memories.forget(input.id, 'person'),
    'memories.pin': (input) => memories.pin(input.id, input.pinned, 'person'),
    'memories.reorderPins': (input) => memories.reorderPins(input.ids, 'person'),
    'memories.undo': (input) => memories.undo(input.changeId, 'person'),
    'memories.resident': async () => {
      const s = await settings.get();
      const { ids: _ids, ...preview } = await buildResident(db, { topN: s.memory.residentTopN, log });
      return preview;
    },
    'recall.search': (input) => recall.search({ query: input.query, sources: input.sources, limit: input.limit }),

    'chat.send': async (input) => {
      const { conversationId, content } = input;
      sleep.touch();
      return chat.send(conversationId, content);
    },

    'sleep.status': () => sleep.status(),
    'sleep.now': () => sleep.now(),
    'sleep.stop': async () => ({ stopped: sleep.stop() }),
    'sleep.runs': (input) => sleepRuns(db, input.limit ?? 10, sleep.dependsOn()),
    'sleep.audit': (input) => auditLog(db, input),
    'sleep.auditEntry': (input) => auditEntry(db, input.id),
    'sleep.digest': (input) => digest(db, input.day),
    'sleep.resolveProposal': async (input) => {
      const p = await proposal(db, input.id);
      if (p.status !== 'open') throw new ApiError('conflict', 'That suggestion was already answered.');
      if (input.accept) await memories.pin(p.memoryId, p.action === 'pin', 'person');
      await setProposalStatus(db, p.id, input.accept ? 'accepted' : 'dismissed');
      return proposal(db, p.id);
    },
    'diary.days': (input) => diaryDays(db, input),
    'diary.mood': (input) => moodSeries(db, input.days ?? 30),
    'diary.hide': async (input) => {
      const block = await hideBlock(db, input.id, input.hidden);
      // A hidden anchor no longer colours its day.
      if (block.kind === 'anchor') await rebuildMoodDays(db);
      events.emit('diary.changed', { day: block.day });
      return block;
    },
    'dreams.list': (input) => dreams(db, input.limit ?? 60),

    'graph.view': async (input) => {
      // Without a date the graph is as it is now: relations whose valid time closed are history, seen on the time slider.
      const filter = { kinds: input.kinds, at: input.at ?? now().toISOString() };
      const totals = await graph.graph({ ...filter, limit: 1 });
      const earliest = await graph.earliestValidTime();
      // Up to this many the whole graph is drawn; above it, a neighbourhood the view can explore from.
      if (input.centerId === undefined && (totals.totalEntities ?? 0) <= WHOLE_GRAPH_LIMIT) {
        // Every edge among the drawn entities: a hub's edges are what make it a hub on the map.
        const whole = await graph.graph({ ...filter, limit: input.limit ?? WHOLE_GRAPH_LIMIT, edgesPerNode: WHOLE_GRAPH_LIMIT });
        return { mode: 'whole', centerId: null, nodes: whole.nodes, edges: whole.edges, totalEntities: whole.totalEntities ?? 0, totalEdges: whole.totalEdges ?? 0, earliest };
      }
      const centerId = input.centerId ?? (await graph.defaultCentre());
      const ego = await graph.ego(centerId, { ...filter, hops: input.hops ?? 2, limit: input.limit ?? 300 });
      return { mode: 'ego', centerId, nodes: ego.nodes, edges: ego.edges, totalEntities: totals.totalEntities ?? 0, totalEdges: totals.totalEdges ?? 0, earliest };
    },
    'graph.search': (input) => graph.search(input.query, input.limit ?? 20),
    'graph.entity': async (input) => {
      const { factIds, profileMemoryId, ...detail } = await graph.get(input.id);
      const [profile] = profileMemoryId === null ? [] : await memories.getMany([profileMemoryId]);
      return { ...detail, profile: profile ?? null, facts: await memories.getMany(factIds) };
    },
    'graph.rename': (input) => graph.rename(input.id, input.name),
    'graph.addAlias': (input) => graph.addAlias(input.id, input.alias),
    'graph.merge': (input) => graph.merge(input.keepId, input.mergeId),
    'graph.hide': (input) => graph.hide(input.id, input.hidden),
    'graph.undo': (input) => graph.undo(input.changeId),
    'graph.import': async (input) => {
      const result = await graph.importGraph(input);
      events.emit('graph.changed', { entityIds: [] });
      return result;
    },
    'chat.stop': async (input) => ({ stopped: await chat.stop(input.conversationId) }),
    'chat.regenerate': async (input) => chat.regenerate(input.conversationId),
    'chat.editLast': async (input) => {
      const { conversationId, content } = input;
      return chat.editLast(conversationId, content);
    },
  };

  // Every call is validated here, once, whatever transport brought it: the renderer is untrusted input.
  const api = Object.fromEntries(
    (Object.keys(handlers) as ApiMethod[]).map((method) => [
      method,
      (raw: unknown) => (handlers[method] as (i: unknown) => Promise<unknown>)(parseInput(method, raw)),
    ]),
  ) as AnimaApi;

  let closing: Promise<void> | undefined;
  return {
    api,
    dataDir,
    async call(method: string, input: unknown) {
      if (!isApiMethod(method)) throw new ApiError('unknown_method', `There is no API method called “${method}”.`);
      if (closing) throw new ApiError('conflict', 'Anima is shutting down.');
      return (api[method as ApiMethod] as (i: unknown) => Promise<unknown>)(input);
    },
    on: (listener) => events.on(listener),
    close() {
      closing ??= (async () => {
        // Stopped downloads keep their partial files; the next start continues from them.
        await localModels.close();
        await sleep.close();
        await chat.stopAll();
        await graphIndexer.close();
        await meaning.close();
        await db.close();
        lock.release();
      })();
      return closing;
    },
  };
}
