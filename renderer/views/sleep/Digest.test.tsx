// The morning digest says each change's reason in the window's language: the host's own reasons come
// as a code and are worded from the translations; a reason in words (a model's) shows as stored.
import i18next from 'i18next';
import { renderToStaticMarkup } from 'react-dom/server';
import { I18nextProvider, initReactI18next } from 'react-i18next';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { DigestChange } from '../../../shared/api.js';
import en from '../../i18n/en.js';
import zhCN from '../../i18n/zh-CN.js';
import { ChangeItem } from './Digest.js';

const i18n = i18next.createInstance();
beforeAll(async () => {
  // No DOM here (Node 20 has no navigator): the system language the days of a reason are spelled in, as a browser gives it.
  if (typeof navigator === 'undefined') vi.stubGlobal('navigator', { language: 'en-GB' });
  await i18n.use(initReactI18next).init({
    resources: { en: { translation: en }, 'zh-CN': { translation: zhCN } },
    lng: 'en',
    fallbackLng: 'en',
    interpolation: { escapeValue: false },
  });
});

const change = (changeId: number, c: Pick<DigestChange, 'action' | 'reason' | 'reasonCode'>): DigestChange => ({
  changeId,
  memoryId: changeId + 100,
  actor: 'light-sleep',
  text: `memory ${changeId}`,
  undoneBy: null,
  ...c,
});

const changes: DigestChange[] = [
  change(1, { action: 'create', reason: 'saved again: near-duplicate of an active memory', reasonCode: { code: 'near_duplicate' } }),
  change(2, { action: 'create', reason: 'she said so on Tuesday' }),
  change(3, { action: 'supersede', reason: 'replaces memory 9: the same slot, a new value', reasonCode: { code: 'same_slot', memoryId: 9 } }),
  change(4, { action: 'create', reason: null, reasonCode: null }),
];

// The items are drawn one by one: the store's state is not what a server render reads.
async function reasonsIn(language: string): Promise<string[]> {
  await i18n.changeLanguage(language);
  const markup = renderToStaticMarkup(
    <I18nextProvider i18n={i18n}>
      <ul>
        {changes.map((c) => (
          <ChangeItem key={c.changeId} change={c} />
        ))}
      </ul>
    </I18nextProvider>,
  );
  return [...markup.matchAll(/<p class="digest-reason">([^<]*)<\/p>/g)].map((m) => m[1]!);
}

describe('the digest’s reasons', () => {
  it('words the host’s coded reasons in English and in Chinese, and shows a reason in words as stored', async () => {
    expect(await reasonsIn('en')).toEqual([
      'Why: said again, so it was saved into this memory rather than as a copy',
      'Why: she said so on Tuesday',
      'Why: a new value for the same thing — it replaces memory #9',
    ]);
    expect(await reasonsIn('zh-CN')).toEqual([
      '原因：又说了一遍，所以存进了这条记忆，而不是另存一份',
      '原因：she said so on Tuesday',
      '原因：同一件事有了新的值——它取代了记忆 #9',
    ]);
  });
});
