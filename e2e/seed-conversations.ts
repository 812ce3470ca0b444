// Seeds a data folder with conversations spread over past days, before the app starts on it. There
// is no API to backdate a message, so this writes through the app's own write path
// (Conversations.append, as electron/conversations/import-locomo.ts does) with each session on its own day.
//
//   node --import tsx --import ./scripts/register-sql.mjs e2e/seed-conversations.ts \
//     --data-dir DIR --fixture FILE.json [--sessions 3] [--turns 10]
//
// FILE is a LoCoMo conversation (../shared/bench/locomo/dev/*.json). Its first `sessions` sessions,
// `turns` turns each, become one conversation each; session k of n is dated n−k+1 days ago at 15:00
// UTC (inside the sleep day in every time zone from UTC−12 to UTC+10 with the default 02:00 sleep
// time), so the newest is yesterday and the diary has several days. Prints a JSON summary.
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { openDatabase } from '../electron/db/open.js';
import { Conversations } from '../electron/conversations/conversations.js';
import { turnContent } from '../electron/conversations/import-locomo.js';

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string' },
    fixture: { type: 'string' },
    sessions: { type: 'string', default: '3' },
    turns: { type: 'string', default: '10' },
  },
});
const dataDir = values['data-dir'];
const fixture = values.fixture;
if (!dataDir || !fixture) {
  console.error('usage: seed-conversations.ts --data-dir DIR --fixture FILE.json [--sessions N] [--turns N]');
  process.exit(2);
}
const sessionCount = Math.max(1, Number(values.sessions));
const turnCount = Math.max(1, Number(values.turns));

const raw = JSON.parse(fs.readFileSync(fixture, 'utf8')) as Record<string, unknown>;
const data = (raw.conversation && typeof raw.conversation === 'object' ? raw.conversation : raw) as Record<string, unknown>;
const a = String(data.speaker_a ?? 'A');
const b = String(data.speaker_b ?? 'B');
const sessions: unknown[][] = [];
for (let n = 1; sessions.length < sessionCount; n++) {
  const s = data[`session_${n}`];
  if (!Array.isArray(s)) break;
  sessions.push(s);
}

const db = await openDatabase(dataDir);
const conversations = new Conversations(db);
const today = new Date();
const summary: { conversationId: string; day: string; messages: number }[] = [];
try {
  for (const [i, turns] of sessions.entries()) {
    const daysAgo = sessions.length - i;
    const base = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - daysAgo, 15, 0));
    const conversation = await conversations.create(`${a} & ${b} — session ${i + 1}`);
    let count = 0;
    for (const t of turns.slice(0, turnCount)) {
      if (!t || typeof t !== 'object') continue;
      const turn = t as Record<string, unknown>;
      const content = turnContent(turn);
      if (!content.trim()) continue;
      await conversations.append({
        conversationId: conversation.id,
        role: 'user',
        content,
        status: 'complete',
        speaker: typeof turn.speaker === 'string' ? turn.speaker : null,
        // A minute between turns keeps them in order and inside the afternoon.
        createdAt: new Date(base.getTime() + count * 60_000),
      });
      count++;
    }
    summary.push({ conversationId: conversation.id, day: base.toISOString().slice(0, 10), messages: count });
  }
} finally {
  await db.close();
}
console.log(JSON.stringify(summary));
