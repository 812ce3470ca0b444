// System prompt assembly. The prompt is snapshotted on each conversation and rebuilt when the sleep
// day rolls over or the self layer changes, so a long conversation keeps a stable prefix (cheap for
// providers that cache prompts) yet never carries yesterday's identity.
import type { SelfBlock } from '../../shared/api.js';
import { SELF_BLOCK_TITLES } from './self-layer.js';

export interface PromptContext {
  selfBlocks: SelfBlock[];
  sleepDay: string;
  timeZone: string;
  now: Date;
  /** Sections added by later layers (resident memory, citation rules, tool notes), in order. */
  extraSections?: { title?: string; body: string }[];
}

export function buildSystemPrompt(ctx: PromptContext): string {
  const parts: string[] = [];
  for (const block of ctx.selfBlocks) {
    const body = block.content.trim();
    if (body) parts.push(`# ${SELF_BLOCK_TITLES[block.key]}\n${body}`);
  }
  const localDate = new Intl.DateTimeFormat('en-GB', {
    timeZone: ctx.timeZone,
    weekday: 'long',
    year: 'numeric',
    month: 'long',
    day: 'numeric',
  }).format(ctx.now);
  parts.push(`# Now\nToday is ${localDate} (${ctx.timeZone}). This conversation belongs to my sleep day ${ctx.sleepDay}.`);
  for (const section of ctx.extraSections ?? []) {
    parts.push(section.title ? `# ${section.title}\n${section.body.trim()}` : section.body.trim());
  }
  parts.push(
    '# How I answer\nI answer as myself, in first person, as the companion described above — never as a generic AI assistant. ' +
      'If I do not know or do not remember something, I say so instead of inventing it.',
  );
  return parts.join('\n\n');
}
