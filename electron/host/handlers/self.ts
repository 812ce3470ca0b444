import type { DiaryBlock } from '../../../shared/api/diary.js';
import type { CompanionProfile } from '../../../shared/api/self.js';
import { Greeter, type LastNight } from '../../agent/greeting.js';
import { readAvatar, saveAvatar } from '../../companion/avatar.js';
import { Greetings } from '../../companion/greetings.js';
import { SELF_ENTITY_ID } from '../../graph/store.js';
import { diaryDays, digest, sleepRuns } from '../../sleep/read.js';
import type { DomainHandlers, HostServices } from './types.js';

/** The latest night and what it left for the morning, read through the sleep room. */
async function lastNight(s: HostServices): Promise<LastNight | null> {
  const run = (await sleepRuns(s.db, 1, new Map()))[0];
  if (!run) return null;
  const night: LastNight = {
    runId: run.id,
    sleepDay: run.sleepDay,
    status: run.status,
    finishedAt: run.finishedAt ? new Date(run.finishedAt) : null,
    digest: null,
    memories: [],
    diary: [],
  };
  if (run.status !== 'done') return night;
  // The digest counts what this night wrote; a night that wrote nothing left no digest.
  const d = await digest(s.db, s.memories, run.sleepDay);
  if (!d || d.runId !== run.id) return night;
  night.digest = d.summary;
  night.memories = await asTheyStandNow(
    s,
    [...d.added, ...d.changed].filter((c) => c.undoneBy === null).map((c) => c.memoryId),
  );
  // This night's diary: the newest narratives and anchors, as many as the digest counted (light sleep writes on the days the talk was on).
  const days = await diaryDays(s.db, { limit: 7 });
  const newest = (blocks: DiaryBlock[], n: number) => blocks.sort((a, b) => b.id - a.id).slice(0, n);
  night.diary = [
    ...newest(
      days.flatMap((x) => x.narratives),
      d.diary.narratives,
    ),
    ...newest(
      days.flatMap((x) => x.anchors),
      d.diary.anchors,
    ),
  ].map((b) => b.body);
  return night;
}

/**
 * The memories the night wrote, as they stand now: the greeting is a model call like any other, so a
 * memory the person forgot since the night never reaches it, and one they corrected reaches it as
 * corrected (its active version's words, not the words the night wrote).
 */
async function asTheyStandNow(s: HostServices, memoryIds: number[]): Promise<string[]> {
  const current = await Promise.all([...new Set(memoryIds)].map((id) => s.memories.activeVersionOf(id)));
  const ids = [...new Set(current.filter((id): id is number => id !== null))];
  const byId = new Map((await s.memories.getMany(ids)).map((m) => [m.id, m]));
  return ids.flatMap((id) => {
    const m = byId.get(id);
    return m && m.status === 'active' ? [m.content] : [];
  });
}

export const selfHandlers = (s: HostServices): DomainHandlers<'self'> => {
  const greeter = new Greeter({
    settings: s.settings,
    conversations: s.conversations,
    chat: s.chat,
    greetings: new Greetings(s.db),
    lastNight: () => lastNight(s),
    now: s.now,
    log: s.log,
  });
  /**
   * The graph's node for the companion carries the name the identity block says: renamed there (journalled,
   * undoable, the old name kept as an alias so mentions of it still find the companion). A name another
   * entity already has is left alone (the person can merge them in the graph).
   */
  const nameTheNode = async (name: string) => {
    try {
      if ((await s.graph.entity(SELF_ENTITY_ID)).name !== name) await s.graph.rename(SELF_ENTITY_ID, name);
    } catch (err) {
      s.log('warn', `the companion's node keeps its name: ${(err as Error).message}`);
    }
  };
  const profile = async (): Promise<CompanionProfile> => {
    const [name, settings] = await Promise.all([s.selfLayer.name(), s.settings.get()]);
    await nameTheNode(name);
    return { name, avatar: await readAvatar(s.dataDir, settings.companion.avatar), color: settings.companion.color };
  };
  return {
    'self.list': () => s.selfLayer.list(),
    'self.update': async ({ key, content }) => {
      const block = await s.selfLayer.update(key, content);
      if (key === 'identity') await nameTheNode(await s.selfLayer.name());
      return block;
    },
    'self.reset': async (input) => {
      const block = await s.selfLayer.reset(input.key);
      if (input.key === 'identity') await nameTheNode(await s.selfLayer.name());
      return block;
    },
    'self.profile': profile,
    'self.rename': async ({ name }) => {
      await s.selfLayer.rename(name);
      return profile();
    },
    'self.setAvatar': async ({ image, color }) => {
      const current = (await s.settings.get()).companion;
      const avatar = image === undefined ? current.avatar : image === null ? null : await saveAvatar(s.dataDir, image);
      await s.settings.update({ companion: { avatar, color: color ?? current.color } });
      return profile();
    },
    'self.greet': () => greeter.greet(),
  };
};
