// "Nothing is recorded silently": when the companion saves, updates or lets go of a memory during a
// chat, a toast says so, with Undo. The person's own changes are confirmed where they made them, and
// the sleep cycle's night of changes belongs to the morning digest, not a pile of toasts.
import type { MemoryChange } from '../../shared/api.js';
import { i18n } from '../i18n/index.js';
import { reportError, useApp } from './app.js';
import { useMemories } from './memories.js';

const ANNOUNCED = new Set<MemoryChange['action']>(['create', 'update', 'forget']);
const GATHER_MS = 400;

let pending: MemoryChange[] = [];
let timer: ReturnType<typeof setTimeout> | undefined;

export function shouldAnnounce(change: MemoryChange): boolean {
  return change.actor === 'companion' && ANNOUNCED.has(change.action) && change.undoneBy === null;
}

function clip(text: string, max = 70): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

async function wordsOf(c: MemoryChange): Promise<string> {
  const inChange = c.after?.content ?? c.before?.content;
  if (typeof inChange === 'string' && inChange.trim()) return clip(inChange);
  // The journal entry may carry only what changed; the memory itself has the words.
  await useMemories.getState().ensure(c.memoryId);
  return clip(useMemories.getState().cache[c.memoryId]?.memory?.content ?? '');
}

async function flush() {
  const changes = pending;
  pending = [];
  if (!changes.length) return;
  const t = i18n.t.bind(i18n);
  let text: string;
  const words = changes.length === 1 ? await wordsOf(changes[0]!) : '';
  if (changes.length === 1 && words) {
    const c = changes[0]!;
    const key =
      c.action === 'create' ? 'memories.toasts.companionSaved' : c.action === 'update' ? 'memories.toasts.companionUpdated' : 'memories.toasts.companionForgot';
    text = t(key, { text: words });
  } else {
    text = t('memories.toasts.companionMany', { count: changes.length });
  }
  useApp.getState().toast({
    tone: 'info',
    text,
    action: {
      label: t('common.undo'),
      run: () => {
        void (async () => {
          // Newest first, so each undo meets the state its change left behind; one undo takes back
          // its whole batch, so a batch is undone once.
          const batches = new Set<string>();
          for (const c of [...changes].reverse()) {
            if (c.batchId) {
              if (batches.has(c.batchId)) continue;
              batches.add(c.batchId);
            }
            await useMemories.getState().undo(c.id);
          }
          useApp.getState().toast({ tone: 'info', text: t('memories.toasts.undone') });
        })().catch(reportError);
      },
    },
  });
}

export function announceChange(change: MemoryChange): void {
  if (!shouldAnnounce(change)) return;
  pending.push(change);
  clearTimeout(timer);
  timer = setTimeout(() => void flush().catch(() => {}), GATHER_MS);
}
