import { ApiError } from '../../../shared/api.js';
import { auditEntry, auditLog, diaryDays, digest, dreams, hideBlock, moodSeries, proposal, setProposalStatus, sleepRuns } from '../../sleep/read.js';
import { rebuildMoodDays } from '../../sleep/steps/simple.js';
import type { DomainHandlers, HostServices } from './types.js';

export const sleepHandlers = (s: HostServices): DomainHandlers<'sleep'> => ({
  'sleep.status': () => s.sleep.status(),
  'sleep.now': () => s.sleep.now(),
  'sleep.stop': async () => ({ stopped: s.sleep.stop() }),
  'sleep.runs': (input) => sleepRuns(s.db, input.limit ?? 10, s.sleep.dependsOn()),
  'sleep.audit': (input) => auditLog(s.db, input),
  'sleep.auditEntry': (input) => auditEntry(s.db, input.id),
  'sleep.digest': (input) => digest(s.db, s.memories, input.day),
  'sleep.importedHistory': () => s.history.status(),
  'sleep.readImportedHistory': (input) => (input.action === 'start' ? s.history.begin() : s.history.pause()),
  'sleep.resolveProposal': async (input) => {
    const p = await proposal(s.db, s.memories, input.id);
    if (p.status !== 'open') throw new ApiError('conflict', 'That suggestion was already answered.');
    if (input.accept) await s.memories.pin(p.memoryId, p.action === 'pin', 'person');
    await setProposalStatus(s.db, p.id, input.accept ? 'accepted' : 'dismissed');
    return proposal(s.db, s.memories, p.id);
  },
});

/** The diary and the book of dreams: what the nights wrote. */
export const diaryHandlers = (s: HostServices): DomainHandlers<'diary' | 'dreams'> => ({
  'diary.days': (input) => diaryDays(s.db, input),
  'diary.mood': (input) => moodSeries(s.db, input.days ?? 30),
  'diary.hide': async (input) => {
    const block = await hideBlock(s.db, input.id, input.hidden);
    // A hidden anchor no longer colours its day.
    if (block.kind === 'anchor') await rebuildMoodDays(s.db);
    s.events.emit('diary.changed', { day: block.day });
    return block;
  },
  'dreams.list': (input) => dreams(s.db, input.limit ?? 60),
});
