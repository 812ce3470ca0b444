// Every database table has one owner folder under electron/; only code there may name the table in SQL.
// Imports cannot show this (every room gets the same database handle), so this script reads the SQL itself:
// the string and template literals of every non-test .ts file under electron/, parsed with TypeScript so
// comments and prose outside strings never count. The tables are those the migrations create (so the list
// never goes stale); a table with no owner below fails the check too.
//
//   node scripts/check-sql-owners.mjs     exit 0: clean; exit 1: one line per violation, `file:line table owner access`
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** Table (or `prefix_*` family) → the folder that owns it, with the reason it lives there. */
const OWNERS = [
  {
    tables: ['conversations', 'messages'],
    folder: 'electron/conversations/',
    reason: 'the transcript: conversations and their messages are written in one place',
  },
  {
    tables: ['memories', 'memory_changes', 'memory_references'],
    folder: 'electron/memory/',
    reason: 'memories and their history change only through the memory store',
  },
  { tables: ['entities', 'entity_*'], folder: 'electron/graph/', reason: 'the knowledge graph: entities, aliases, mentions, edges and their changes' },
  {
    tables: ['sleep_*', 'auto_llm_runs', 'diary_blocks', 'mood_days'],
    folder: 'electron/sleep/',
    reason: 'what the nightly cycle runs, records and writes (its runs, the diary, the mood)',
  },
  {
    tables: ['embeddings', 'embedding_state'],
    folder: 'electron/embed/',
    reason: 'vectors are derived data, kept in step with the text by the embedding queue alone',
  },
  { tables: ['settings'], folder: 'electron/settings/', reason: 'each setting is validated when read: one reader keeps a bad row from spreading' },
  { tables: ['providers'], folder: 'electron/providers/', reason: 'a provider row pairs with its key in the secret store: one place keeps the two in step' },
  {
    tables: ['self_blocks', 'companion_*'],
    folder: 'electron/companion/',
    reason: "the companion's self layer (its identity blocks) and its morning greetings are written by the companion alone",
  },
  { tables: ['schema_migrations'], folder: 'electron/db/', reason: "the migration runner's bookkeeping" },
  {
    tables: ['devices'],
    folder: 'electron/devices/',
    reason: "a paired device's token is checked, used and revoked in one place, which keeps only its digest",
  },
];

/** Folders that may READ (FROM / JOIN) tables they do not own. Writes stay with the owner. */
const READERS = [
  {
    folder: 'electron/memory/recall/',
    tables: ['messages', 'conversations', 'memories', 'memory_changes', 'diary_blocks', 'embeddings'],
    reason: 'recall is the search read-model over the indexed text: it searches messages, memories, the diary and their vectors',
  },
  {
    folder: 'electron/graph/profiles.ts',
    tables: ['memories'],
    reason: "an entity's newest facts in one statement: passing a much-named entity's thousands of mention ids through code to keep 12 would be the slow way",
  },
  {
    folder: 'electron/embed/',
    tables: ['messages', 'memories', 'diary_blocks'],
    reason: 'vectors are a derived index of the text: the queue reads what it embeds and joins vectors back to live rows',
  },
  {
    folder: 'electron/archive/',
    tables: [
      'settings',
      'providers',
      'self_blocks',
      'conversations',
      'messages',
      'memories',
      'memory_changes',
      'memory_references',
      'diary_blocks',
      'mood_days',
      'entities',
      'entity_aliases',
      'entity_edges',
      'schema_migrations',
    ],
    reason: 'the archive reads every table to export it (page by page, as JSON Postgres makes); it never writes',
  },
];

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MIGRATIONS = 'electron/db/migrations';
const skipped = (file) => file.endsWith('.test.ts') || file.endsWith('.d.ts') || /(^|\/)testing\//.test(file) || file.startsWith(`${MIGRATIONS}/`);

function tsFiles(dir) {
  const out = [];
  for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const file = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') out.push(...tsFiles(file));
    } else if (entry.name.endsWith('.ts')) out.push(file);
  }
  return out;
}

/** The source text of each string and template literal piece in a file, with its offset. */
function literals(file, text) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out = [];
  const visit = (node) => {
    switch (node.kind) {
      case ts.SyntaxKind.StringLiteral:
      case ts.SyntaxKind.NoSubstitutionTemplateLiteral:
      case ts.SyntaxKind.TemplateHead:
      case ts.SyntaxKind.TemplateMiddle:
      case ts.SyntaxKind.TemplateTail: {
        const start = node.getStart(sf);
        out.push({ start, text: text.slice(start, node.end) });
        break;
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { sf, out };
}

const NAME = '"?([a-z_][a-z0-9_]*)"?';
// DELETE FROM before FROM, so a delete is a write; TABLE covers CREATE/ALTER/DROP/LOCK TABLE.
const ACCESS = new RegExp(
  `\\b(DELETE\\s+FROM|TRUNCATE(?:\\s+TABLE)?|FROM|JOIN|INTO|UPDATE|TABLE)\\s+(?:ONLY\\s+)?(?:IF\\s+(?:NOT\\s+)?EXISTS\\s+)?${NAME}`,
  'gi',
);
// `FROM a x, b y`: the further tables of a comma list.
const MORE = new RegExp(`^\\s*(?:(?:AS\\s+)?[a-z_][a-z0-9_]*)?\\s*,\\s*${NAME}`, 'i');

/** Each table named in a piece of SQL: { index, table, access: 'read' | 'write' }. */
function tablesIn(sql) {
  const found = [];
  for (const m of sql.matchAll(ACCESS)) {
    const keyword = m[1].toUpperCase();
    const access = keyword === 'FROM' || keyword === 'JOIN' ? 'read' : 'write';
    found.push({ index: m.index, table: m[2].toLowerCase(), access });
    if (keyword === 'FROM') {
      let rest = sql.slice(m.index + m[0].length);
      let offset = m.index + m[0].length;
      for (let more = MORE.exec(rest); more; more = MORE.exec(rest)) {
        found.push({ index: offset, table: more[1].toLowerCase(), access });
        offset += more[0].length;
        rest = rest.slice(more[0].length);
      }
    }
  }
  return found;
}

function stripSqlComments(sql) {
  return sql.replace(/--[^\n]*/g, ' ').replace(/\/\*[\s\S]*?\*\//g, ' ');
}

/** The tables the migrations leave in place (in order: created, renamed, dropped), plus those the migration runner creates. */
function knownTables() {
  const tables = new Set();
  const apply = (sql) => {
    const re =
      /\bCREATE\s+(?:UNLOGGED\s+)?TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?"?(\w+)"?|\bALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?"?(\w+)"?\s+RENAME\s+TO\s+"?(\w+)"?|\bDROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?([\w\s,"]+)/gi;
    for (const m of stripSqlComments(sql).matchAll(re)) {
      if (m[1]) tables.add(m[1].toLowerCase());
      else if (m[2]) {
        tables.delete(m[2].toLowerCase());
        tables.add(m[3].toLowerCase());
      } else for (const t of m[4].split(',')) tables.delete(t.replace(/"/g, '').trim().split(/\s+/)[0].toLowerCase());
    }
  };
  const migrations = readdirSync(path.join(ROOT, MIGRATIONS))
    .filter((f) => f.endsWith('.sql'))
    .sort();
  for (const f of migrations) apply(readFileSync(path.join(ROOT, MIGRATIONS, f), 'utf8'));
  for (const file of tsFiles('electron/db').filter((f) => !skipped(f))) {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    for (const lit of literals(file, text).out) apply(lit.text);
  }
  return tables;
}

const familyMatches = (pattern, table) => (pattern.endsWith('*') ? table.startsWith(pattern.slice(0, -1)) : table === pattern);
const ownerOf = (table) => OWNERS.find((o) => o.tables.some((p) => familyMatches(p, table)));
const mayRead = (file, table) => READERS.some((r) => file.startsWith(r.folder) && r.tables.includes(table));

const tables = knownTables();
const violations = [];
for (const table of [...tables].sort()) {
  if (!ownerOf(table)) violations.push(`${MIGRATIONS}: table ${table} has no owner folder in scripts/check-sql-owners.mjs`);
}

const files = tsFiles('electron').filter((f) => !skipped(f));
for (const file of files) {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const { sf, out } = literals(file, text);
  const seen = new Set();
  for (const lit of out) {
    for (const { index, table, access } of tablesIn(lit.text)) {
      if (!tables.has(table)) continue;
      const owner = ownerOf(table);
      if (!owner || file.startsWith(owner.folder)) continue;
      if (access === 'read' && mayRead(file, table)) continue;
      const line = sf.getLineAndCharacterOfPosition(lit.start + index).line + 1;
      const key = `${line} ${table} ${access}`;
      if (seen.has(key)) continue;
      seen.add(key);
      violations.push(`${file}:${line} ${table} ${owner.folder} ${access}`);
    }
  }
}

for (const v of violations) console.log(v);
console.log(
  `check-sql-owners: ${files.length} files scanned, ${tables.size} tables known, ${violations.length} violation${violations.length === 1 ? '' : 's'}`,
);
process.exitCode = violations.length ? 1 : 0;
