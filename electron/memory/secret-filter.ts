// Memories are shown to a model on every turn and copied into prompts, exports and digests, so a
// credential that slips in leaks everywhere at once. Every write path (the remember tool, edits in
// the UI, the sleep cycle, the embedder) asks findSecret first and refuses the write on a hit.
//
// The patterns aim at things that are credentials by shape. Prose must pass: "my skill-set",
// "sk-learn", "the token is in 1Password", "max_tokens=4096" are not secrets.

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
];

// Global copies, so a rejected match ("sk-learn-…") does not hide a real key later in the text.
const SCANNERS = PATTERNS.map((p) => ({ ...p, re: new RegExp(p.re.source, `${p.re.flags}g`) }));

export function findSecret(text: string): SecretHit | null {
  for (const { kind, re, accept } of SCANNERS) {
    re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(text))) {
      if (!accept || accept(m)) return { kind };
    }
  }
  return null;
}

export const SECRET_REFUSAL =
  'Not saved: memories never hold credentials (passwords, API keys, tokens, private keys). ' +
  'Record where the credential lives instead — for example "The work API key is in the password manager under \'Work\'" — never the credential itself.';

/** The refusal with what was recognised, so the model knows which part to leave out. */
export function secretRefusal(hit: SecretHit): string {
  return `${SECRET_REFUSAL} (Recognised: ${hit.kind}.)`;
}
