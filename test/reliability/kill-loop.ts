// Part 1: kill -9 at random moments, with a ledger of acknowledged writes.
//
// The real app runs as its own process on one data folder. A writer sends chat messages (answered by
// the loopback fake model, streamed), creates memories, edits self blocks and renames conversations;
// every write the server answered with 2xx goes into the ledger. Then the process is SIGKILLed — at
// a random moment, mid-stream, during start-up, or during "Sleep now" (whose night takes a snapshot)
// — and started again on the same folder. Every acknowledged write must be there; a reply cut by the
// kill must come back `partial` (never `streaming`) holding a prefix of what the model sent.
import { startFakeLlm } from '../../e2e/fake-llm/server.js';
import { sleepResponder } from '../../e2e/fake-llm/sleep-responder.js';
import { SELF_BLOCK_KEYS } from '../../shared/api.js';
import { call, configure, must, newDataDir, random, spawnApp, waitFor, type AppEndpoint, type AppProcess, type Entry } from './harness.js';

export interface KillLoopOptions {
  cycles: number;
  entry: Entry;
  seed?: number;
  log?: (line: string) => void;
  /** Told after every cycle (the runner writes the report so far: a long run stopped early still has one). */
  onCycle?: (report: KillLoopReport) => void;
}

export interface KillLoopReport {
  cycles: number;
  seed: number;
  moments: Record<Moment, number>;
  acknowledgedWrites: number;
  writesByKind: Record<string, number>;
  /** Acknowledged writes missing or changed after a restart: must be 0. */
  lost: number;
  /** Starts on the crashed folder that did not come up: must be 0. */
  failedRestarts: number;
  /** Replies cut by a kill, found `partial` after the restart. */
  killedReplies: number;
  /** Replies still `streaming` after a restart: must be 0. */
  streamingAfterRestart: number;
  /** A stored reply that is not a prefix of what the model sent: must be 0. */
  replyNotPrefix: number;
  /** Sleep runs still `running` after a restart (the crashed night must be closed): must be 0. */
  sleepRunsStuck: number;
  sleepRunsKilled: number;
  problems: string[];
  elapsedS: number;
}

type Moment = 'random' | 'mid-stream' | 'start-up' | 'sleep';
const MOMENTS: Moment[] = ['random', 'mid-stream', 'start-up', 'sleep'];

const WORDS =
  'apple river lantern orchard violin harbour meadow copper pepper winter saffron glacier tulip compass falcon marble ribbon thistle canyon pebble walnut breeze cobalt ember'.split(
    ' ',
  );

interface ChatEntry {
  conversationId: string;
  userId: string;
  userContent: string;
  assistantId: string;
  expected: string;
}
/** A value set by acknowledged writes: the last acknowledged, plus the one in flight when the kill came (either may be stored). */
interface Slot {
  /** What the last check found. */
  verified: string | undefined;
  /** Acknowledged since that check (two writers may be answered out of order: any of them may be last). */
  acked: Set<string>;
  /** Sent and not answered: the kill may have come after they were stored. */
  inFlight: Set<string>;
}
const newSlot = (): Slot => ({ verified: undefined, acked: new Set(), inFlight: new Set() });
/** Is `now` a value the acknowledged writes allow? */
const allowed = (slot: Slot, now: string | undefined) =>
  now !== undefined && (slot.inFlight.has(now) || (slot.acked.size > 0 ? slot.acked.has(now) : slot.verified === undefined || now === slot.verified));

export async function runKillLoop(opts: KillLoopOptions): Promise<KillLoopReport> {
  const seed = opts.seed ?? Date.now() & 0x7fffffff;
  const rng = random(seed);
  const log = opts.log ?? (() => {});
  const started = Date.now();
  const fake = await startFakeLlm({ defaultChunkDelayMs: 12 });
  fake.respond = sleepResponder();
  const dataDir = newDataDir('anima-rel-kill-');
  const report: KillLoopReport = {
    cycles: 0,
    seed,
    moments: { random: 0, 'mid-stream': 0, 'start-up': 0, sleep: 0 },
    acknowledgedWrites: 0,
    writesByKind: {},
    lost: 0,
    failedRestarts: 0,
    killedReplies: 0,
    streamingAfterRestart: 0,
    replyNotPrefix: 0,
    sleepRunsStuck: 0,
    sleepRunsKilled: 0,
    problems: [],
    elapsedS: 0,
  };
  const problem = (text: string) => {
    if (report.problems.length < 50) report.problems.push(text);
    log(`  problem: ${text}`);
  };

  // The ledger.
  const chats: ChatEntry[] = [];
  const memories = new Map<number, string>();
  const selfBlocks = new Map<string, Slot>();
  const titles = new Map<string, Slot>();
  const checkedChats = new Set<string>();
  const ack = (kind: string) => {
    report.acknowledgedWrites++;
    report.writesByKind[kind] = (report.writesByKind[kind] ?? 0) + 1;
  };
  const sentence = (n: number) => Array.from({ length: n }, () => rng.pick(WORDS)).join(' ');
  let serial = 0;

  /** One write of a random kind; records it in the ledger when acknowledged. */
  async function writeOnce(app: AppEndpoint, conversations: string[]): Promise<void> {
    const kind = rng.int(10);
    serial++;
    if (kind < 3) {
      const content = `note ${serial}: ${sentence(6 + rng.int(30))}`;
      const r = await call(app, 'chat.send', { conversationId: rng.pick(conversations), content });
      if (r.status === 200) {
        ack('chat.send');
        chats.push({
          conversationId: r.body.userMessage.conversationId,
          userId: r.body.userMessage.id,
          userContent: r.body.userMessage.content,
          assistantId: r.body.assistantMessage.id,
          expected: `I hear you: ${content}`,
        });
      }
    } else if (kind < 6) {
      const r = await call(app, 'memories.create', { type: rng.pick(['world', 'preference', 'experience'] as const), content: `${sentence(8)} (${serial})` });
      if (r.status === 200) {
        ack('memories.create');
        memories.set(r.body.memory.id, r.body.memory.content);
      }
    } else if (kind < 8) {
      const key = rng.pick(SELF_BLOCK_KEYS);
      const content = `self ${serial}: ${sentence(10)}`;
      const slot = selfBlocks.get(key) ?? newSlot();
      selfBlocks.set(key, slot);
      slot.inFlight.add(content);
      const r = await call(app, 'self.update', { key, content });
      if (r.status === 200) {
        ack('self.update');
        slot.inFlight.delete(content);
        slot.acked.add(r.body.content);
      }
    } else {
      const id = rng.pick(conversations);
      const title = `title ${serial} ${sentence(3)}`;
      const slot = titles.get(id) ?? newSlot();
      titles.set(id, slot);
      slot.inFlight.add(title);
      const r = await call(app, 'conversations.rename', { id, title });
      if (r.status === 200) {
        ack('conversations.rename');
        slot.inFlight.delete(title);
        slot.acked.add(r.body.title);
      }
    }
  }

  /** Checks the ledger against the restarted app; `all` re-reads everything, else only what is new. */
  async function verify(app: AppEndpoint, all: boolean): Promise<void> {
    const byConversation = new Map<string, ChatEntry[]>();
    for (const c of chats) {
      if (!all && checkedChats.has(c.assistantId)) continue;
      byConversation.set(c.conversationId, [...(byConversation.get(c.conversationId) ?? []), c]);
    }
    for (const [conversationId, entries] of byConversation) {
      const got = await must(app, 'conversations.get', { id: conversationId });
      const messages = new Map<string, any>((got.messages as any[]).map((m) => [m.id, m]));
      for (const entry of entries) {
        const user = messages.get(entry.userId);
        if (!user || user.content !== entry.userContent) {
          report.lost++;
          problem(`chat message ${entry.userId} ${user ? 'changed' : 'missing'}`);
        }
        const reply = messages.get(entry.assistantId);
        if (!reply) {
          report.lost++;
          problem(`reply ${entry.assistantId} missing`);
          continue;
        }
        if (reply.status === 'streaming') {
          report.streamingAfterRestart++;
          problem(`reply ${entry.assistantId} still streaming after a restart`);
        }
        if ((reply.status === 'partial' || reply.status === 'complete') && !entry.expected.startsWith(reply.content)) {
          report.replyNotPrefix++;
          problem(`reply ${entry.assistantId} (${reply.status}) is not a prefix of what the model sent: ${JSON.stringify(reply.content).slice(0, 120)}`);
        }
        if (!checkedChats.has(entry.assistantId) && reply.status === 'partial') report.killedReplies++;
        checkedChats.add(entry.assistantId);
      }
    }
    if (all || memories.size > 0) {
      const list = all ? [...memories] : [...memories].slice(-20);
      for (const [id, content] of list) {
        const r = await call(app, 'memories.get', { id });
        if (r.status !== 200 || r.body.memory?.content !== content) {
          report.lost++;
          problem(`memory ${id} ${r.status !== 200 ? `missing (${r.status})` : `changed to ${JSON.stringify(r.body.memory?.content)?.slice(0, 80)}`}`);
        }
      }
    }
    const blocks = new Map<string, string>(((await must(app, 'self.list')) as any[]).map((b) => [b.key, b.content]));
    for (const [key, slot] of selfBlocks) {
      const now = blocks.get(key);
      if (slot.acked.size + slot.inFlight.size === 0 && slot.verified === undefined) continue;
      if (!allowed(slot, now)) {
        report.lost++;
        problem(`self block ${key} is ${JSON.stringify(now)?.slice(0, 60)}, acknowledged ${JSON.stringify([...slot.acked]).slice(0, 120)}`);
      }
      selfBlocks.set(key, { ...newSlot(), verified: now });
    }
    const list = new Map<string, string>(((await must(app, 'conversations.list', {})) as any[]).map((c) => [c.id, c.title]));
    for (const [id, slot] of titles) {
      const now = list.get(id);
      if (slot.acked.size + slot.inFlight.size === 0 && slot.verified === undefined) continue;
      if (!allowed(slot, now)) {
        report.lost++;
        problem(`conversation ${id} is titled ${JSON.stringify(now)}, acknowledged ${JSON.stringify([...slot.acked])}`);
      }
      titles.set(id, { ...newSlot(), verified: now });
    }
    const status = await must(app, 'sleep.status');
    if (status.lastRun?.status === 'running' && !status.running) {
      report.sleepRunsStuck++;
      problem(`sleep run ${status.lastRun.id} still 'running' after a restart`);
    }
  }

  /** Starts the app; a start that does not come up counts as a failed restart and ends the loop. */
  async function start(): Promise<{ proc: AppProcess; app: AppEndpoint } | null> {
    const proc = spawnApp(dataDir, opts.entry);
    try {
      return { proc, app: await proc.ready };
    } catch (err) {
      report.failedRestarts++;
      problem(`restart failed: ${String(err).slice(0, 400)}`);
      await proc.kill9();
      return null;
    }
  }

  let running = await start();
  if (!running) throw new Error('the app did not start on a fresh data folder');
  let startupMs = 3_000;
  try {
    await configure(running.app, fake.baseUrl);
    const conversations: string[] = [];
    for (let i = 0; i < 3; i++) conversations.push((await must(running.app, 'conversations.create', { title: `kill loop ${i}` })).id);

    for (let cycle = 1; cycle <= opts.cycles; cycle++) {
      const { proc, app } = running;
      const moment = MOMENTS[rng.int(MOMENTS.length)]!;
      report.moments[moment]++;
      let stopWriting = false;
      // Two writers, so a kill often finds writes in flight.
      const writer = Promise.all(
        [0, 1].map(async () => {
          while (!stopWriting && proc.child.exitCode === null && proc.child.signalCode === null) await writeOnce(app, conversations);
        }),
      );
      if (moment === 'mid-stream') {
        const content = `long ${++serial}: ${sentence(60)}`;
        const conversationId = rng.pick(conversations);
        const r = await call(app, 'chat.send', { conversationId, content });
        if (r.status === 200) {
          ack('chat.send');
          chats.push({
            conversationId,
            userId: r.body.userMessage.id,
            userContent: r.body.userMessage.content,
            assistantId: r.body.assistantMessage.id,
            expected: `I hear you: ${content}`,
          });
        }
        await new Promise((resolve) => setTimeout(resolve, 200 + rng.int(1_500)));
      } else if (moment === 'sleep') {
        const r = await call(app, 'sleep.now', {});
        if (r.status === 200 && r.body.runId !== null) report.sleepRunsKilled++;
        await new Promise((resolve) => setTimeout(resolve, rng.int(4_000)));
      } else {
        await new Promise((resolve) => setTimeout(resolve, 200 + rng.int(4_000)));
      }
      await proc.kill9();
      stopWriting = true;
      await writer;

      if (moment === 'start-up') {
        // A crash while starting: killed somewhere between spawn and the address line (or just after).
        const early = spawnApp(dataDir, opts.entry);
        const t0 = Date.now();
        await new Promise((resolve) => setTimeout(resolve, rng.int(startupMs)));
        await early.kill9();
        log(`  cycle ${cycle}: killed ${Date.now() - t0} ms into a start`);
      }
      const t0 = Date.now();
      running = await start();
      if (!running) break;
      startupMs = Math.max(500, Math.round((startupMs + (Date.now() - t0)) / 2));
      await configure(running.app, fake.baseUrl);
      // A chat that was mid-stream is recovered at start; wait until nothing of ours is streaming.
      await verify(running.app, cycle % 25 === 0 || cycle === opts.cycles);
      report.cycles = cycle;
      report.elapsedS = Math.round((Date.now() - started) / 1000);
      opts.onCycle?.(report);
      log(`cycle ${cycle}/${opts.cycles} (${moment}): ${report.acknowledgedWrites} acknowledged, ${report.lost} lost, start ${Date.now() - t0} ms`);
    }
    if (running) await waitFor('a last call', async () => ((await call(running!.app, 'app.info', {})).status === 200 ? true : undefined));
  } finally {
    await running?.proc.stop();
    await fake.close();
    report.elapsedS = Math.round((Date.now() - started) / 1000);
  }
  return report;
}
