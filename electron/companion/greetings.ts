// The morning greetings the companion wrote (companion_greetings, migration 026): one row per sleep
// day. The row is claimed before the reply starts, so two windows asking at once get one message.
import type { Database } from '../db/open.js';

export class Greetings {
  constructor(private readonly db: Database) {}

  /** Claims the sleep day for a greeting drawn from this night; false when it was claimed already. */
  async claim(sleepDay: string, runId: number): Promise<boolean> {
    const r = await this.db.query(
      'INSERT INTO companion_greetings (sleep_day, run_id) VALUES ($1, $2) ON CONFLICT (sleep_day) DO NOTHING RETURNING sleep_day',
      [sleepDay, runId],
    );
    return r.rows.length === 1;
  }

  /** The reply the claimed greeting became. */
  async wrote(sleepDay: string, conversationId: string, messageId: string): Promise<void> {
    await this.db.query('UPDATE companion_greetings SET conversation_id = $2, message_id = $3 WHERE sleep_day = $1', [sleepDay, conversationId, messageId]);
  }

  /** A claim whose reply could not be started is given back (bookkeeping only: no message was written). */
  async release(sleepDay: string): Promise<void> {
    await this.db.query('DELETE FROM companion_greetings WHERE sleep_day = $1 AND message_id IS NULL', [sleepDay]);
  }

  /** Whether this sleep day has its greeting, and the newest night any greeting was drawn from. */
  async state(sleepDay: string): Promise<{ greetedToday: boolean; lastRunId: number | null }> {
    const r = await this.db.query<{ today: boolean; last: number | null }>(
      'SELECT bool_or(sleep_day = $1) AS today, max(run_id)::int AS last FROM companion_greetings',
      [sleepDay],
    );
    return { greetedToday: r.rows[0]?.today === true, lastRunId: r.rows[0]?.last ?? null };
  }
}
