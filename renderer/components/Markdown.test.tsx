import i18next from 'i18next';
import { renderToStaticMarkup } from 'react-dom/server';
import { I18nextProvider, initReactI18next } from 'react-i18next';
import { beforeAll, describe, expect, it } from 'vitest';
import en from '../i18n/en.js';
import { MarkdownText } from './Markdown.js';

const i18n = i18next.createInstance();
beforeAll(async () => {
  await i18n.use(initReactI18next).init({ resources: { en: { translation: en } }, lng: 'en', interpolation: { escapeValue: false } });
});

function html(content: string): string {
  return renderToStaticMarkup(
    <I18nextProvider i18n={i18n}>
      <MarkdownText content={content} />
    </I18nextProvider>,
  );
}

const chipIds = (markup: string) => [...markup.matchAll(/data-testid="citation-chip" data-id="([^"]+)"/g)].map((m) => m[1]);

describe('citations in replies', () => {
  it('draws each marker as a memory chip and never shows the raw marker', () => {
    const out = html('Mara is in **Lisbon** [[anima:12]], and likes tea [[anima:3]].');
    expect(chipIds(out)).toEqual(['12', '3']);
    expect(out).not.toContain('[[anima:');
    expect(out).toContain('data-state="active"');
  });

  it('keeps markers in code blocks and inline code exactly as written', () => {
    const out = html('Cite like `[[anima:1]]`:\n\n```\n[[anima:2]]\n```\n\nthen [[anima:3]]');
    expect(chipIds(out)).toEqual(['3']);
    expect(out).toContain('<code>[[anima:1]]</code>');
    expect(out).toContain('[[anima:2]]');
  });

  it('shows a marker that can never be a memory as a missing chip', () => {
    const out = html('odd [[anima:m-1]]');
    expect(chipIds(out)).toEqual(['m-1']);
    expect(out).toContain('data-state="missing"');
  });

  it('still renders ordinary links as links', () => {
    const out = html('[docs](https://example.org) [[anima:4]]');
    expect(out).toContain('href="https://example.org"');
    expect(chipIds(out)).toEqual(['4']);
  });
});
