// Host events → stores. Deltas are applied in batches, on an animation frame and at most ~30 times a
// second: a fast model sends hundreds of tiny pieces a second, and re-rendering (and re-parsing the
// reply's markdown) for each would make typing and scrolling stutter.
import type { ApiEvents } from '../../shared/api.js';
import type { RendererClient } from '../api/index.js';
import { useApp } from './app.js';
import { useChat } from './chat.js';
import { useConversations } from './conversations.js';
import { useMemories } from './memories.js';
import { useDiary } from './diary.js';
import { useGraph } from './graph.js';
import { announceChange } from './memoryAnnouncements.js';
import { useSleep } from './sleep.js';

const MIN_INTERVAL_MS = 33;

export function connectEvents(client: RendererClient): () => void {
  let buffer: ApiEvents['chat.delta'][] = [];
  let frame: number | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let lastFlush = 0;

  const flush = () => {
    if (frame !== null) cancelAnimationFrame(frame);
    if (timer !== null) clearTimeout(timer);
    frame = null;
    timer = null;
    lastFlush = performance.now();
    const pending = buffer;
    buffer = [];
    useChat.getState().applyDeltas(pending);
  };

  const schedule = () => {
    if (frame !== null || timer !== null) return;
    const wait = Math.max(0, MIN_INTERVAL_MS - (performance.now() - lastFlush));
    timer = setTimeout(() => {
      timer = null;
      frame = requestAnimationFrame(flush);
      // Animation frames pause in a hidden tab; text should still arrive.
      timer = setTimeout(flush, 120);
    }, wait);
  };

  const offs = [
    client.on('chat.delta', (payload) => {
      buffer.push(payload);
      schedule();
    }),
    client.on('chat.finished', (payload) => {
      flush();
      useChat.getState().applyFinished(payload);
      useConversations.getState().noteChanged();
    }),
    // Before the first word: what the reply waits for (an on-device model loading).
    client.on('chat.status', (payload) => {
      useChat.getState().applyStatus(payload);
    }),
    // Another window may have written here (a message sent from the phone): the open conversation is read again.
    client.on('conversations.changed', ({ conversationId }) => {
      useConversations.getState().noteChanged();
      void useChat.getState().noteChanged(conversationId);
    }),
    client.on('settings.changed', (settings) => {
      useApp.getState().applySettings(settings);
    }),
    client.on('chat.injected', (payload) => {
      useMemories.getState().noteInjected(payload);
    }),
    client.on('memories.changed', ({ change }) => {
      useMemories.getState().noteChanged(change);
      useSleep.getState().noteMemoriesChanged();
      announceChange(change);
    }),
    client.on('sleep.progress', (payload) => {
      useSleep.getState().noteProgress(payload);
    }),
    client.on('sleep.finished', (payload) => {
      useSleep.getState().noteFinished(payload);
      useDiary.getState().noteChanged();
      // A night connects what the day mentioned.
      useGraph.getState().noteChanged([]);
    }),
    client.on('diary.changed', () => {
      useDiary.getState().noteChanged();
    }),
    client.on('graph.changed', ({ entityIds }) => {
      useGraph.getState().noteChanged(entityIds);
    }),
    client.onConnectionState((state) => useApp.getState().setConnection(state)),
    client.onConnect((reconnected) => {
      useApp.getState().setConnection('open');
      // What was read before the stream first opened may have changed before it did (a reply the
      // host was writing as the window started): the open conversation and the list are read again.
      void useChat.getState().refreshOpen();
      void useConversations.getState().refresh();
      if (!reconnected) return;
      // Whatever else happened while the stream was down was not seen here.
      void useApp
        .getState()
        .reloadSettings()
        .catch(() => {});
      useMemories.getState().refreshShown(true);
      useSleep.getState().refreshShown();
      useDiary.getState().refreshShown();
      useGraph.getState().refreshShown();
    }),
  ];

  return () => {
    flush();
    for (const off of offs) off();
  };
}
