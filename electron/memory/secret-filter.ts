// Memories are shown to a model on every turn and copied into prompts, exports and digests, so a
// credential that slips in leaks everywhere at once. Every write path — memories (the remember tool,
// edits in the UI, the sleep cycle), self blocks, entity names and aliases, and the embedder's choice
// of texts — asks findSecret first and refuses (or skips) the write on a hit. A chat message keeps a
// secret as written (it is the person's own conversation); it never becomes anything else.
//
// Two sets of rules, on the text as it would be read rather than as it is typed:
//   - the maintained rule set of the field: @secretlint/secretlint-rule-preset-recommend (AWS, GCP,
//     npm, Slack, basic-auth URLs, OpenAI, Anthropic, Groq, Hugging Face, Linear, Notion, private
//     keys, SendGrid, Shopify, GitHub, GitLab, Grafana, 1Password, database URLs, Vault, Vercel,
//     Databricks, Docker, Figma), run synchronously through the rule interface secretlint publishes;
//   - what it does not cover, here: credentials in prose ("my password is …", 密码是…/密码：/密码＝),
//     any URL with user:password@, JWTs, Authorization headers, Stripe, Telegram, Azure, Twilio,
//     base64-wrapped credentials and `name=value` assignments with secret-looking names.
// Before matching, zero-width and other invisible characters go, full-width forms become ASCII
// (NFKC), and a key broken across lines is also read joined.
//
// The rules aim at things that are credentials by shape. Prose must pass: "my skill-set",
// "sk-learn", "the token is in 1Password", "max_tokens=4096", 密码学 are not secrets.
import { creator as recommendedPreset } from '@secretlint/secretlint-rule-preset-recommend';

export interface SecretHit {
  /** A short name for what was found, for the refusal and the log (never the matched text). */
  kind: string;
}

interface Pattern {
  kind: string;
  re: RegExp;
  /** Extra check on the match, for shapes that prose can imitate. */
  accept?: (match: RegExpExecArray) => boolean;
}

// Random tokens mix letters and digits; hyphenated English words ("sk-something-long") do not.
const looksRandom = (s: string) => /\d/.test(s) && /[A-Za-z]/.test(s);

// The names an assignment must end in to count as a secret: code and config files use these.
// Bare "key", "pass" and "pwd" are left out: "key=C minor", "compass=north" and a shell's
// "PWD=/home/…" are not credentials.
const SECRET_NAME =
  '[A-Za-z0-9_.-]*(?:password|passwd|passphrase|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret|auth[_-]?token|credentials?|session[_-]?(?:id|key))';

// Values that point at a credential rather than being one: "$OPENAI_API_KEY", "<your key>",
// "${{ secrets.X }}", "****". Pointing at where a secret lives is exactly what we ask for.
const PLACEHOLDER = /^(?:\$|%|<|\{\{|\$\{|process\.env|os\.environ|env\(|\*+$|x+$|\.+$)/i;

// What a credential in prose is called, longest first so "secret access key" wins over "secret".
const PROSE_NAME = [
  'secret access key',
  'access key secret',
  'secret key',
  'access key',
  'api key',
  'api token',
  'access token',
  'auth token',
  'authentication token',
  'bearer token',
  'bot token',
  'refresh token',
  'personal access token',
  'private key',
  'client secret',
  'signing secret',
  'webhook secret',
  'password',
  'passphrase',
  'passcode',
  'passwd',
  'pin code',
  'token',
  'secret',
  'credentials',
]
  .map((n) => n.replace(/ /g, '[ _-]?'))
  .join('|');

// A value said in prose: mixes letters and digits, is six digits or more, carries a symbol, or is quoted. "The password is
// in 1Password", "the token is valid for an hour" and "my password is long" are not credentials.
const proseValue = (value: string, quoted: boolean) => {
  if (PLACEHOLDER.test(value)) return false;
  if (quoted) return value.length >= 4;
  return value.length >= 6 && (looksRandom(value) || /^\d+$/.test(value) || (/[!@#$%^&*+=~?]/.test(value) && /[A-Za-z0-9]/.test(value)));
};

const PATTERNS: Pattern[] = [
  { kind: 'private key', re: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/ },
  { kind: 'Anthropic API key', re: /(?<![A-Za-z0-9])sk-ant-[A-Za-z0-9_-]{16,}/ },
  {
    kind: 'OpenAI-style API key',
    re: /(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?([A-Za-z0-9_-]{20,})/,
    accept: (m) => looksRandom(m[1] ?? ''),
  },
  { kind: 'AWS access key id', re: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/ },
  { kind: 'GitHub token', re: /(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{30,}/ },
  { kind: 'GitHub fine-grained token', re: /(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{22,}/ },
  { kind: 'Slack token', re: /(?<![A-Za-z0-9])xox[baprs]-[A-Za-z0-9-]{10,}/ },
  { kind: 'Google API key', re: /(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}/ },
  { kind: 'GitLab token', re: /(?<![A-Za-z0-9])glpat-[A-Za-z0-9_-]{20,}/ },
  { kind: 'Stripe key', re: /(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/ },
  { kind: 'Stripe webhook secret', re: /(?<![A-Za-z0-9])whsec_[A-Za-z0-9]{24,}/ },
  { kind: 'SendGrid API key', re: /(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}/ },
  { kind: 'npm token', re: /(?<![A-Za-z0-9])npm_[A-Za-z0-9]{30,}/ },
  { kind: 'Hugging Face token', re: /(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}/ },
  {
    kind: 'JSON Web Token',
    re: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/,
  },
  {
    // "Authorization: Bearer …", "Authorization: Basic …", "-H 'Authorization: token …'".
    kind: 'Authorization header',
    re: /Authorization["']?\s*[:=]\s*["']?(?:Bearer|Basic|Token|Digest|Bot)?\s*([A-Za-z0-9._~+/-]{12,}=*)/i,
    accept: (m) => !PLACEHOLDER.test(m[1] ?? '') && /\d/.test(m[1] ?? ''),
  },
  { kind: 'bearer token', re: /(?<![A-Za-z])Bearer\s+([A-Za-z0-9._~+/-]{20,}=*)/, accept: (m) => looksRandom(m[1] ?? '') },
  {
    // scheme://user:password@host — a database URL (postgres, mongodb+srv, redis, amqp), a proxy,
    // an FTP or HTTP address with its password in it.
    kind: 'URL with a password',
    re: /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,30}:\/\/([^\s:@/]{1,128}):([^\s@/]{3,256})@[^\s/?#]{1,255}/,
    accept: (m) => !PLACEHOLDER.test(m[2] ?? '') && !/^(?:password|pass|pwd|secret)$/i.test(m[2] ?? ''),
  },
  { kind: 'Telegram bot token', re: /(?<![0-9])[0-9]{8,10}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/ },
  { kind: 'Azure storage key', re: /(?:AccountKey|SharedAccessKey)\s*=\s*[A-Za-z0-9+/]{30,}={0,2}/i },
  { kind: 'Azure SAS signature', re: /[?&]sig=[A-Za-z0-9%+/]{30,}/ },
  { kind: 'Twilio API key', re: /(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])/ },
  { kind: 'Twilio auth token', re: /twilio[\s\S]{0,120}?(?<![0-9a-fA-F])[0-9a-fA-F]{32}(?![0-9a-fA-F])/i },
  {
    // `password=hunter22`, `API_KEY: "abc123…"`, `"client_secret": "…"`. A colon is how people
    // write prose too ("Password: ask Mara"), so after a colon the value must look machine-made.
    kind: 'secret assignment',
    re: new RegExp(`(?<![A-Za-z0-9])["']?${SECRET_NAME}["']?\\s*(=|:)\\s*["']?([^\\s"'\`,;]{4,})`, 'i'),
    accept: (m) => {
      const value = m[2] ?? '';
      if (PLACEHOLDER.test(value)) return false;
      return m[1] === '=' || (value.length >= 8 && /\d/.test(value));
    },
  },
  {
    // "my AWS secret access key is …", "the wifi password was Tiger-2024!", "token: 'abc…'".
    kind: 'credential in prose',
    re: new RegExp(
      `(?<![A-Za-z])(?:${PROSE_NAME})(?:\\s+(?:for|of|on|to|at)(?:\\s+(?:the|my|our|a|an|his|her|their|this|that))?\\s+[^\\s]{1,40}){0,2}\\s*(?:is|was|is now|are|reads|becomes|:|=|=>|->|set to|changed to)\\s*(["'“‘\`]?)([^\\s"'”’\`,;]{4,200})`,
      'i',
    ),
    accept: (m) => proseValue((m[2] ?? '').replace(/[.!?。]+$/, ''), (m[1] ?? '') !== ''),
  },
  {
    // 密码是…, 密码：…, 密码＝… (NFKC makes the full-width forms ASCII), 口令为…, WiFi 密钥就是….
    kind: 'credential in prose (Chinese)',
    // "token" and "API key" count only before a Chinese verb: "Token: pending" is English prose.
    re: /(?:(?:密码|口令|密钥|秘钥|私钥|令牌|授权码)\s*(?:是|为|都是|就是|改成了?|改为|换成了?|设为|设置为|设置成|:|=)|(?:token|api ?key)\s*(?:是|为|就是|改成了?|改为|换成了?|设为|设置为|设置成))\s*["'“‘「『]?([\x21-\x7e]{4,200})/i,
    accept: (m) => !PLACEHOLDER.test(m[1] ?? ''),
  },
];

// Global copies, so a rejected match ("sk-learn-…") does not hide a real key later in the text.
const SCANNERS = PATTERNS.map((p) => ({ ...p, re: new RegExp(p.re.source, `${p.re.flags}g`) }));

function matchPatterns(text: string): SecretHit | null {
  for (const { kind, re, accept } of SCANNERS) {
    re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(text))) {
      if (!accept || accept(m)) return { kind };
      if (m[0].length === 0) re.lastIndex++;
    }
  }
  return null;
}

// --- secretlint's recommended rules, run synchronously ------------------------------------------
//
// @secretlint/core's lintSource is asynchronous only because a rule may be (the GCP rule reads .p12
// files); every scanner in the preset is synchronous on text. So the rules are driven here through
// the interface they are written against: the preset registers each rule, each rule's create()
// gets a context whose report() records the rule and message id (never the message, which quotes
// the secret), and file() reads a text source. Filter rules (secretlint-disable comments) are left
// out: text someone writes must not be able to switch the check off. secret-filter.test.ts checks
// this driver reports what @secretlint/core reports on the whole corpus.
type PresetContext = Parameters<typeof recommendedPreset.create>[0];
type Rule = Parameters<PresetContext['registerRule']>[0];
type RuleContext = Parameters<Rule['create']>[0];
type Source = Parameters<NonNullable<ReturnType<Rule['create']>['file']>>[0];

// Options the preset leaves at their defaults: the AWS rule also looks for access key ids.
const RULE_OPTIONS: Record<string, object> = { '@secretlint/secretlint-rule-aws': { enableIDScanRule: true } };

const RULES: { rule: Rule; options: object }[] = [];
recommendedPreset.create(
  {
    sharedOptions: {},
    registerRule(rule, defaults) {
      const text = rule.meta.supportedContentTypes.some((t) => t === 'text' || t === 'all');
      if (rule.meta.type !== 'scanner' || !text || defaults?.disabled) return;
      RULES.push({ rule, options: { ...(defaults?.options ?? {}), ...(RULE_OPTIONS[rule.meta.id] ?? {}) } });
    },
  },
  {},
);

function textSource(content: string): Source {
  const position = (index: number) => {
    const before = content.slice(0, index);
    const line = before.split('\n').length;
    return { line, column: index - (before.lastIndexOf('\n') + 1) };
  };
  const index = ({ line, column }: { line: number; column: number }) => {
    const lines = content.split('\n');
    return lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0) + column;
  };
  return {
    hasBOM: false,
    content,
    filePath: undefined,
    physicalFilePath: undefined,
    contentType: 'text',
    ext: '.txt',
    getFilePath: () => undefined,
    getPhysicalFilePath: () => undefined,
    indexToPosition: position,
    positionToIndex: index,
    rangeToLocation: ([a, b]) => ({ start: position(a), end: position(b) }),
    locationToRange: ({ start, end }) => [index(start), index(end)],
  };
}

/** The first finding of secretlint's recommended rules in `text`, as "rule: messageId". */
export function matchSecretlint(text: string): SecretHit | null {
  const found: string[] = [];
  const source = textSource(text);
  for (const { rule, options } of RULES) {
    const short = rule.meta.id.replace(/^@secretlint\/secretlint-rule-/, '');
    const context: RuleContext = {
      sharedOptions: {},
      createTranslator: () => ((messageId: string, data?: object) => ({ message: String(messageId), messageId, data })) as never,
      report: (d) => void found.push(`${short}: ${d.message.messageId}`),
      ignore: () => {},
    };
    const result = rule.create(context, options as never).file?.(source);
    // A rule that answers later (binary files only, never a text source) is not waited for.
    if (result instanceof Promise) result.catch(() => {});
    if (found.length) return { kind: found[0]! };
  }
  return null;
}

// --- normalisation -----------------------------------------------------------------------------

// Zero-width and other invisible formatting characters someone may paste inside a key (or a model
// may put there), bidi controls included: nobody types them on purpose in a credential.
const INVISIBLE = /[\p{Cf}\p{Variation_Selector}\u115F\u1160\u3164\uFFA0]/gu;

// A line break with token characters on both sides: a key wrapped by an editor or a chat window.
// The piece before the break must be a run of 12 or more: short words on their own lines stay apart.
const WRAPPED = /(?<=[A-Za-z0-9+/=_.-]{12})[ \t]*\r?\n[ \t>]*(?=[A-Za-z0-9+/=_.-])/g;

/** The text as the rules read it: invisible characters gone, full-width forms ASCII (NFKC). */
export function normaliseForSecrets(text: string): string {
  return text.replace(INVISIBLE, '').normalize('NFKC').replace(INVISIBLE, '');
}

function scan(text: string): SecretHit | null {
  return matchPatterns(text) ?? matchSecretlint(text);
}

// Base64 runs long enough to hold "user:password" or a key, at most this many per text.
const BASE64_RUN = /(?<![A-Za-z0-9+/=])(?:[A-Za-z0-9+/]{4}){4,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?(?![A-Za-z0-9+/=])/g;
const MAX_BASE64_RUNS = 32;

/** A credential wrapped in base64: "user:password", or a text the rules recognise once decoded. */
function scanBase64(text: string): SecretHit | null {
  BASE64_RUN.lastIndex = 0;
  let m: RegExpExecArray | null;
  for (let n = 0; n < MAX_BASE64_RUNS && (m = BASE64_RUN.exec(text)); n++) {
    const run = m[0];
    // A word of letters only ("Internationalisation") is not base64 worth decoding.
    if (!/[0-9+/=]/.test(run) || run.length > 8192) continue;
    const decoded = Buffer.from(run, 'base64').toString('utf8');
    // Binary (an image, a hash) decodes to control characters and broken UTF-8: not text.
    if (!/^[\x20-\x7E\t\r\n]+$/.test(decoded)) continue;
    if (/^[\w.@+-]{1,128}:[^\s]{4,256}$/.test(decoded.trim())) return { kind: 'base64 credentials (user:password)' };
    const inner = scan(decoded);
    if (inner) return { kind: `${inner.kind} (base64)` };
  }
  return null;
}

/** The first credential found in `text`, or null. Synchronous and cheap enough for every write. */
export function findSecret(text: string): SecretHit | null {
  if (!text) return null;
  const plain = normaliseForSecrets(text);
  const hit = scan(plain);
  if (hit) return hit;
  if (plain.includes('\n')) {
    const joined = plain.replace(WRAPPED, '');
    if (joined !== plain) {
      const wrapped = scan(joined);
      if (wrapped) return { kind: `${wrapped.kind} (split across lines)` };
    }
  }
  return scanBase64(plain);
}

export const SECRET_REFUSAL =
  'Not saved: memories never hold credentials (passwords, API keys, tokens, private keys). ' +
  'Record where the credential lives instead — for example "The work API key is in the password manager under \'Work\'" — never the credential itself.';

/** The refusal with what was recognised, so the model knows which part to leave out. */
export function secretRefusal(hit: SecretHit): string {
  return `${SECRET_REFUSAL} (Recognised: ${hit.kind}.)`;
}
