// A person's long message (a pasted document, a log) shown collapsed to its start, with "show all":
// the conversation stays readable around it, and nothing of it is hidden for good.
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CitedText } from '../../components/CitationChip.js';

/** Longer than this (characters or lines), a message opens collapsed. */
export const COLLAPSE_CHARS = 2400;
const COLLAPSE_LINES = 30;
/** What a collapsed message shows of its start. */
const PREVIEW_CHARS = 900;
const PREVIEW_LINES = 12;

function preview(text: string): string {
  let cut = text.slice(0, PREVIEW_CHARS);
  const lines = cut.split('\n');
  if (lines.length > PREVIEW_LINES) cut = lines.slice(0, PREVIEW_LINES).join('\n');
  return `${cut.trimEnd()}…`;
}

export function LongText({ text }: { text: string }) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  const long = text.length > COLLAPSE_CHARS || text.split('\n', COLLAPSE_LINES + 1).length > COLLAPSE_LINES;
  if (!long) return <CitedText text={text} />;
  return (
    <div className={open ? 'long-text open' : 'long-text'} data-testid="long-text" data-open={open}>
      <CitedText text={open ? text : preview(text)} />
      <button type="button" className="long-text-toggle" data-testid="long-text-toggle" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? t('longMessage.showLess') : t('longMessage.showAll', { count: text.length })}
      </button>
    </div>
  );
}
