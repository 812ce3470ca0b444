import { lintSource } from '@secretlint/core';
import { creator as recommendedPreset } from '@secretlint/secretlint-rule-preset-recommend';
import { describe, expect, it } from 'vitest';
import { findSecret, matchSecretlint, normaliseForSecrets, SECRET_REFUSAL, secretRefusal } from './secret-filter.js';
import { CONTROLS, CREDENTIALS } from './testing/secret-corpus.js';

// Fake credentials are assembled at run time so no secret scanner mistakes this file for a leak.
const chars = (n: number, seed = 7) => Array.from({ length: n }, (_, i) => 'aB3dE6gH9jK2mN5pQ8sT1vW4yZ7'[(i * seed) % 27]).join('');
const upper = (n: number) => Array.from({ length: n }, (_, i) => 'QZ7XW3KD9RT2MB5'[i % 15]).join('');

const SAMPLES: [kind: string, text: string][] = [
  ['private key', `my key:\n-----BEGIN ${'OPENSSH'} PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----`],
  ['private key', `-----BEGIN ${'RSA'} PRIVATE KEY-----`],
  ['private key', '-----BEGIN ' + 'PRIVATE KEY-----'],
  ['Anthropic API key', `The key is ${['sk', 'ant', 'api03', chars(40)].join('-')} for work`],
  ['OpenAI-style API key', `use ${['sk', 'proj', chars(40)].join('-')}`],
  ['OpenAI-style API key', `${'sk'}-${chars(48)}`],
  ['AWS access key id', `${'AK' + 'IA'}${upper(16)}`],
  ['AWS access key id', `temporary: ${'AS' + 'IA'}${upper(16)}.`],
  ['GitHub token', `${'gh' + 'p_'}${chars(36)}`],
  ['GitHub fine-grained token', `${'github' + '_pat_'}11${upper(9)}0_${chars(60)}`],
  ['Slack token', `${'xo' + 'xb'}-1234567890-0987654321-${chars(24)}`],
  ['Slack token', `${'xo' + 'xp'}-${chars(30)}`],
  ['Google API key', `${'AI' + 'za'}${chars(35)}`],
  ['GitLab token', `${'gl' + 'pat'}-${chars(20)}`],
  ['secret assignment', 'password=hunter22'],
  ['secret assignment', 'DB_PASSWORD = "correct-horse"'],
  ['secret assignment', 'api_key: 8f3a9c2e71b4'],
  ['secret assignment', '{"client_secret": "s3cr3tValue99"}'],
  ['secret assignment', 'export GITHUB_TOKEN=abcd1234'],
];

describe('findSecret', () => {
  it.each(SAMPLES)('recognises a %s', (kind, text) => {
    expect(findSecret(text)).toEqual({ kind });
  });

  it.each([
    'my skill-set is broad',
    'I use sk-learn for small models',
    'a task-sk-something-long-and-hyphenated-word list',
    'The work API key is in the password manager under "Work".',
    'max_tokens=4096 works best with this model',
    'Password: ask Mara',
    'Secret: the surprise party is on Friday',
    'OPENAI_API_KEY=$OPENAI_API_KEY in the shell profile',
    'api_key=<your key here>',
    'PWD=/home/mara',
    'key=C minor',
    'AKIA is the prefix of AWS access key ids',
    'ghp_ is what GitHub personal tokens start with',
    '我的妹妹在上海的复旦大学读书',
  ])('lets prose pass: %s', (text) => {
    expect(findSecret(text)).toBeNull();
  });

  it('keeps looking after a match that is not a key', () => {
    expect(findSecret(`sk-learn-is-a-library-name-here, then ${'sk'}-${chars(48)}`)).toEqual({ kind: 'OpenAI-style API key' });
  });

  it('tells the model to record where the credential lives, never the credential', () => {
    expect(SECRET_REFUSAL).toContain('Record where the credential lives');
    expect(SECRET_REFUSAL).toContain('never the credential itself');
    expect(secretRefusal({ kind: 'GitHub token' })).toBe(`${SECRET_REFUSAL} (Recognised: GitHub token.)`);
  });
});

describe('the secret corpus', () => {
  it('holds at least 80 credentials and 20 harmless controls', () => {
    expect(CREDENTIALS.length).toBeGreaterThanOrEqual(80);
    expect(CONTROLS.length).toBeGreaterThanOrEqual(20);
  });

  it.each(CREDENTIALS.map((s) => [s.form, s.text]))('refuses a credential: %s', (_form, text) => {
    expect(findSecret(text)).not.toBeNull();
  });

  it.each(CONTROLS.map((s) => [s.form, s.text]))('lets a control pass: %s', (_form, text) => {
    expect(findSecret(text)).toBeNull();
  });

  it('names what it found, never the value', () => {
    for (const s of CREDENTIALS) {
      const hit = findSecret(s.text)!;
      for (const word of s.text.split(/[\s"'=:,]+/).filter((w) => w.length >= 12 && /\d/.test(w))) expect(hit.kind).not.toContain(word);
    }
  });

  // The rules run here synchronously, outside @secretlint/core: its own engine must find the same.
  it('reports what @secretlint/core reports with the recommended preset, text by text', async () => {
    const config = {
      rules: [
        {
          id: recommendedPreset.meta.id,
          rule: recommendedPreset,
          rules: [{ id: '@secretlint/secretlint-rule-aws', options: { enableIDScanRule: true } }],
        },
      ],
    };
    let agreed = 0;
    for (const s of [...CREDENTIALS, ...CONTROLS]) {
      const content = normaliseForSecrets(s.text);
      const core = await lintSource({
        source: { content, filePath: 'note.txt', ext: '.txt', contentType: 'text' },
        options: { config, noPhysicFilePath: true },
      });
      const ours = matchSecretlint(content);
      expect({ form: s.form, found: ours !== null }).toEqual({ form: s.form, found: core.messages.length > 0 });
      if (ours) expect(core.messages.map((m) => m.ruleId.replace(/^@secretlint\/secretlint-rule-/, ''))).toContain(ours.kind.split(':')[0]);
      agreed++;
    }
    expect(agreed).toBe(CREDENTIALS.length + CONTROLS.length);
  });

  it('is cheap enough for every write: median well under a millisecond on the corpus', () => {
    const texts = [...CREDENTIALS, ...CONTROLS].map((s) => s.text);
    for (const t of texts) findSecret(t); // warm up the rules' regular expressions
    const times: number[] = [];
    for (let round = 0; round < 3; round++) {
      for (const t of texts) {
        const start = performance.now();
        findSecret(t);
        times.push(performance.now() - start);
      }
    }
    times.sort((a, b) => a - b);
    // Generous against a busy machine: measured at about 0.01 ms (0.3 ms at the 95th percentile).
    expect(times[times.length >> 1]).toBeLessThan(5);
  });
});
