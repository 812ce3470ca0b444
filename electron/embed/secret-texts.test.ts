// A text holding a credential is never embedded: the message keeps its words as written, but the
// model never reads it, and a vector it had (made before the rule) goes. Real PGlite, real tiny model.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Conversations } from '../conversations/conversations.js';
import { pgvectorSupport } from '../db/pgvector.js';
import { embedBatch } from './embed-batch.js';
import type { QueueStats } from './embedding-service.js';
import { MODEL, openVectorBed, VECTOR_BED_MS, type VectorBed } from './testing/vector-bed.js';
import { contentHash, upsertVectors } from './vectors.js';

let bed: VectorBed;

beforeAll(async () => {
  bed = await openVectorBed('anima-embed-secrets-');
}, VECTOR_BED_MS);
afterAll(async () => {
  await bed?.close();
});

describe.skipIf(!pgvectorSupport().usable)('texts chosen for embedding', () => {
  it('skips a message holding a credential and drops the vector it had, and embeds the rest', async () => {
    const { db, tiny } = bed;
    const conversations = new Conversations(db, () => {});
    const conversationId = (await conversations.create('t')).id;
    const clean = await conversations.append({ conversationId, role: 'user', content: 'We walked to the lighthouse.', status: 'complete' });
    const secret = await conversations.append({ conversationId, role: 'user', content: 'my email password is Hunter2024!', status: 'complete' });
    const seq = async (id: string) => (await db.query<{ seq: number }>('SELECT seq::float8 AS seq FROM messages WHERE id = $1', [id])).rows[0]!.seq;
    const secretSeq = await seq(secret.id);
    // A vector made before credentials were kept out.
    const [old] = await tiny.embed([secret.content]);
    await upsertVectors(db, MODEL, tiny.dimensions, [{ source: 'message', sourceId: secretSeq, hash: contentHash(secret.content), vector: old! }]);

    const read: string[] = [];
    const stats: QueueStats = { embedded: 0, skipped: 0, deleted: 0, batches: 0, failedBatches: 0, turnedAway: 0, gaveUp: 0 };
    await embedBatch(
      db,
      tiny,
      [
        { source: 'message', id: clean.id },
        { source: 'message', id: secret.id },
      ],
      { passagePrefix: '', maxBatchChars: 10_000, stats, embed: (texts) => (read.push(...texts), tiny.embed(texts)) },
    );

    expect(read).toEqual(['We walked to the lighthouse.']);
    const vectors = (await db.query<{ id: number }>(`SELECT source_id::float8 AS id FROM embeddings WHERE source = 'message' ORDER BY source_id`)).rows;
    expect(vectors.map((v) => v.id)).toEqual([await seq(clean.id)]);
    expect(stats).toMatchObject({ embedded: 1, deleted: 1 });
    // The message itself is kept as written: it is the person's own conversation.
    expect((await db.query<{ content: string }>('SELECT content FROM messages WHERE id = $1', [secret.id])).rows[0]!.content).toBe(
      'my email password is Hunter2024!',
    );
  });
});
