// Imported history and the sleep cycle. A conversation brought in from another app's export may hold
// years of messages; left unread, the next light sleep would try to read all of it in one night (a
// month of sleep at once, and the night's budget gone on the first days), and a nap would read the
// whole history the first time the person wrote in it. So the importer marks each imported
// conversation as already read by both, in the transaction that writes it: the watermarks move to its
// last message, and only what is said after the import is read, as for any conversation.
//
// Not done here: reading the imported history later, day by day, as a budgeted background catch-up
// ("read my imported history" in Settings). It would find the imported conversations through the
// conversations room (imported_from) and walk them oldest day first within the night's budget; the
// watermarks set here are where it would have to leave the nightly light sleep alone.
import type { Transaction } from '@electric-sql/pglite';
import type { Database } from '../db/open.js';
import { NAP } from './nap.js';
import { LIGHT_SLEEP } from './steps/light-sleep.js';

/** The steps that read chat messages past a watermark: an imported conversation is marked read by each. */
export const STEPS_THAT_READ_MESSAGES = [LIGHT_SLEEP, NAP] as const;

/**
 * Marks a conversation's messages through `lastSeq` as already read by light sleep and the nap. Takes
 * the importer's transaction, so a conversation is never stored without its marks. A watermark never
 * moves back.
 */
export async function markImportedHistoryRead(tx: Transaction | Database, conversationId: string, lastSeq: number): Promise<void> {
  if (!(lastSeq > 0)) return;
  await tx.query(
    `INSERT INTO sleep_watermarks (step_id, conversation_id, last_seq)
     SELECT s, $2, $3 FROM unnest($1::text[]) AS s
     ON CONFLICT (step_id, conversation_id) DO UPDATE
       SET last_seq = greatest(sleep_watermarks.last_seq, EXCLUDED.last_seq), updated_at = now()`,
    [[...STEPS_THAT_READ_MESSAGES], conversationId, lastSeq],
  );
}
