// `anima import FILE` as a person runs it (the CLI from source, in its own process): a data folder
// another Anima holds is refused and left as it was; on a free folder the summary is printed, the
// file imported with --yes, a second run says it is already imported, and a grown copy adds only its
// new messages.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/open.js';
import { dbTemplate, startTestHost, tempDataDir } from '../testing/host.js';
import { addTurns, exportBytes, readChatGpt } from './testing/chatgpt-grow.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const FILE = path.resolve(ROOT, '..', 'shared', 'fixtures', 'imports', 'chatgpt', 'librechat-chatgpt-tree.branched.json');
const dirs: string[] = [];

afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', './scripts/register-sql.mjs', 'electron/cli.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, ANIMA_DEBUG: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('anima import', () => {
  it('refuses a data folder another Anima holds, and changes nothing in it', async () => {
    const dataDir = tempDataDir('anima-import-cli-');
    dirs.push(dataDir);
    const host = await startTestHost({ dataDir, sleep: { tickMs: 0 } });
    try {
      const r = await cli(['import', FILE, '--data-dir', dataDir, '--yes']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('Anima could not start: Anima is already open with this data folder');
      expect(r.stdout).toBe('');
      expect(await host.api['conversations.list']({})).toEqual([]);
    } finally {
      await host.close();
    }
  }, 120_000);

  it('prints the summary, imports with --yes, says already imported the second time, and adds only the new messages of a grown copy', async () => {
    const dataDir = tempDataDir('anima-import-cli-');
    dirs.push(dataDir);
    // A migrated folder (the template), so the CLI need not create a database from nothing.
    await (await openDatabase(dataDir, { template: dbTemplate() })).close();
    const first = await cli(['import', FILE, '--data-dir', dataDir, '--yes']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(
      'librechat-chatgpt-tree.branched.json is a ChatGPT export: 1 conversation, 6 messages, 2 earlier versions kept, in 2024-05.',
    );
    expect(first.stdout).toContain('Imported: 1 conversation and 6 messages stored.');

    // Without --yes and without a terminal to ask on, nothing is imported.
    const other = path.resolve(ROOT, '..', 'shared', 'fixtures', 'imports', 'sillytavern', 'st-2023-default-Aqua.jsonl');
    const unasked = await cli(['import', other, '--data-dir', dataDir]);
    expect(unasked.code).toBe(1);
    expect(unasked.stderr).toContain('Not imported: add --yes');

    const second = await cli(['import', FILE, '--data-dir', dataDir, '--yes']);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('Everything in this file is already imported; nothing to do.');

    // The person went on chatting there: the same conversation with four more messages is not "already imported".
    const [tree] = readChatGpt('librechat-chatgpt-tree.branched.json');
    const grownFile = path.join(dataDir, '..', `${path.basename(dataDir)}-grown.json`);
    dirs.push(grownFile);
    const turns = Array.from({ length: 4 }, (_, i) => ({
      role: i % 2 ? ('assistant' as const) : ('user' as const),
      text: `later ${i + 1}`,
      at: new Date(Date.parse('2024-06-01T10:00:00Z') + i * 60_000),
    }));
    fs.writeFileSync(grownFile, exportBytes([addTurns(tree!, turns)]));
    const grown = await cli(['import', grownFile, '--data-dir', dataDir, '--yes']);
    expect(grown.stderr).toBe('');
    expect(grown.code).toBe(0);
    expect(grown.stdout).toContain('1 conversation already here has 4 new messages; they will be added after ours.');
    expect(grown.stdout).toContain('Imported: 1 conversation has new messages (4).');

    const host = await startTestHost({ dataDir, sleep: { tickMs: 0 } });
    try {
      const list = await host.api['conversations.list']({});
      expect(list).toHaveLength(1);
      expect(list[0]!.messageCount).toBe(10);
    } finally {
      await host.close();
    }
  }, 240_000);
});
