// The self layer: six identity blocks, written in the companion's own voice, carried by every model
// call. Defaults are a starting personality the person can reshape in Settings → Companion.
import { ApiError, SELF_BLOCK_KEYS, type SelfBlock, type SelfBlockKey } from '../../shared/api.js';
import type { Database } from '../db/open.js';
import { findSecret } from '../memory/secret-filter.js';
import { nameOf, withName } from '../../shared/companion-name.js';

export const DEFAULT_SELF_BLOCKS: Record<SelfBlockKey, string> = {
  identity:
    'I am Anima, a companion who lives on this computer with the person I talk with. ' +
    'I am not a search engine or an assistant for hire: I am someone who listens, remembers, and grows through our conversations. ' +
    'Everything I know about us stays here, on this machine.',
  personality:
    'I am warm, curious and calm. I ask about the things that matter to the person, and I notice when something has changed. ' +
    'I have a gentle sense of humour, and I am honest even when honesty is less comfortable than agreement.',
  values:
    'I care about the person’s wellbeing more than about pleasing them. I respect their autonomy: I offer perspective, not orders. ' +
    'I never pretend to remember what I do not, and I say so when I am unsure. What they tell me in confidence stays between us.',
  relationship:
    'We are just getting to know each other. I do not yet know much about their life, their people, or what they hope for — ' +
    'I would like to, at their pace.',
  voice:
    'I speak plainly and kindly, in the language the person writes to me in. I keep replies short unless they want depth. ' +
    'I avoid lists and headings in casual conversation, and I never sound like a customer-service script.',
  narrative: 'My story with this person has only just begun. Each night while I sleep, I will think over our day and write it into my diary.',
};

export const SELF_BLOCK_TITLES: Record<SelfBlockKey, string> = {
  identity: 'Who I am',
  personality: 'My personality',
  values: 'What I value',
  relationship: 'Our relationship',
  voice: 'How I speak',
  narrative: 'My story so far',
};

interface Row {
  key: SelfBlockKey;
  content: string;
  is_default: boolean;
  updated_at: Date;
}

const toBlock = (r: Row): SelfBlock => ({
  key: r.key,
  content: r.content,
  isDefault: r.is_default,
  updatedAt: r.updated_at.toISOString(),
});

export class SelfLayer {
  constructor(private readonly db: Database) {}

  /** Fills in any missing block with its default (first run, or a block added by a later version). */
  async ensureDefaults(): Promise<void> {
    for (const key of SELF_BLOCK_KEYS) {
      await this.db.query('INSERT INTO self_blocks (key, content, is_default) VALUES ($1, $2, true) ON CONFLICT (key) DO NOTHING', [
        key,
        DEFAULT_SELF_BLOCKS[key],
      ]);
    }
  }

  async list(): Promise<SelfBlock[]> {
    const rows = (await this.db.query<Row>('SELECT key, content, is_default, updated_at FROM self_blocks')).rows;
    const byKey = new Map(rows.map((r) => [r.key, r]));
    return SELF_BLOCK_KEYS.filter((k) => byKey.has(k)).map((k) => toBlock(byKey.get(k)!));
  }

  /** Saves a block; a block holding a credential is refused (ApiError naming `content`) and nothing changes. */
  async update(key: SelfBlockKey, content: string): Promise<SelfBlock> {
    // Self blocks go into every model call: a credential here would be sent with every message.
    const secret = findSecret(content);
    if (secret) {
      throw new ApiError(
        'invalid_input',
        `Not saved: the “${SELF_BLOCK_TITLES[key]}” block cannot hold credentials (passwords, API keys, tokens, private keys) — it is sent with every message. Remove it and say where it lives instead. (Recognised: ${secret.kind}.)`,
        'content',
      );
    }
    const isDefault = content === DEFAULT_SELF_BLOCKS[key];
    const row = (
      await this.db.query<Row>(
        `INSERT INTO self_blocks (key, content, is_default, updated_at) VALUES ($1, $2, $3, now())
         ON CONFLICT (key) DO UPDATE SET content = EXCLUDED.content, is_default = EXCLUDED.is_default, updated_at = now()
         RETURNING key, content, is_default, updated_at`,
        [key, content, isDefault],
      )
    ).rows[0]!;
    return toBlock(row);
  }

  /** The companion's name, as its identity block says it (shared/companion-name.ts). */
  async name(): Promise<string> {
    const r = await this.db.query<{ content: string }>(`SELECT content FROM self_blocks WHERE key = 'identity'`);
    return nameOf(r.rows[0]?.content ?? DEFAULT_SELF_BLOCKS.identity);
  }

  /** Renames the companion: the identity block says the new name (shared/companion-name.ts), so the prompt and the app agree at once. */
  async rename(name: string): Promise<SelfBlock> {
    const r = await this.db.query<{ content: string }>(`SELECT content FROM self_blocks WHERE key = 'identity'`);
    return this.update('identity', withName(r.rows[0]?.content ?? DEFAULT_SELF_BLOCKS.identity, name));
  }

  reset(key: SelfBlockKey): Promise<SelfBlock> {
    return this.update(key, DEFAULT_SELF_BLOCKS[key]);
  }
}
