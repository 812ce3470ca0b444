import { describe, expect, it } from 'vitest';
import { ApiError } from '../../shared/api.js';
import en from './en.js';
import zhCN from './zh-CN.js';
import { errorSentence, errorWords } from './errors.js';
import { languageFromLocale, resolveLanguage } from './resolve.js';

const translator = (resources: object) => (key: string) => key.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], resources) as string;

describe('provider errors in words', () => {
  it('says what happened and what to do, in either language, keeping the server detail', () => {
    const err = new ApiError('provider_unreachable', "Can't reach the model server at 127.0.0.1:11434.");
    const words = errorWords(translator(en), err);
    expect(words.what).toBe('I couldn’t reach the model server.');
    expect(words.todo).toMatch(/Settings → Models/);
    expect(words.detail).toBe("Can't reach the model server at 127.0.0.1:11434.");
    expect(errorWords(translator(zhCN), err).what).toBe('我连不上模型服务。');
  });

  it('accepts the plain error shapes stored on messages', () => {
    expect(errorWords(translator(en), { code: 'provider_auth', message: '401' }).what).toMatch(/API key/);
    expect(errorSentence(translator(en), { code: 'no_provider', message: '' })).toMatch(/^No model is connected yet\. Add one/);
  });

  it('falls back to a general sentence for anything unknown', () => {
    expect(errorWords(translator(en), new Error('boom')).code).toBe('internal');
    expect(errorWords(translator(en), { code: 'from_the_future', message: 'x' }).code).toBe('internal');
    expect(errorWords(translator(en), 'a string').detail).toBe('a string');
  });
});

describe('language choice', () => {
  it('follows the system unless a language is chosen', () => {
    expect(resolveLanguage('system', 'zh-TW')).toBe('zh-CN');
    expect(resolveLanguage('system', 'zh')).toBe('zh-CN');
    expect(resolveLanguage('system', 'de-DE')).toBe('en');
    expect(resolveLanguage('system', undefined)).toBe('en');
    expect(resolveLanguage('en', 'zh-CN')).toBe('en');
    expect(resolveLanguage('zh-CN', 'en-US')).toBe('zh-CN');
    expect(languageFromLocale('zhx')).toBe('en');
  });
});
