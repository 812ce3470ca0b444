// filesNamed on a real folder: only regular files whose names match, sorted, with their sizes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { filesNamed } from './named.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'anima-files-named-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('filesNamed', () => {
  it('lists the matching regular files by name with their sizes, and nothing else', () => {
    const dir = path.join(root, 'mixed');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'b.png'), 'bb');
    fs.writeFileSync(path.join(dir, 'a.png'), 'aaa');
    fs.writeFileSync(path.join(dir, 'a.png.partial'), 'half');
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'x');
    fs.mkdirSync(path.join(dir, 'c.png'));
    fs.symlinkSync(path.join(dir, 'gone.png'), path.join(dir, 'd.png'));

    expect(filesNamed(dir, /^[a-z]\.png$/)).toEqual([
      { name: 'a.png', bytes: 3 },
      { name: 'b.png', bytes: 2 },
    ]);
  });

  it('lists nothing for a folder that does not exist', () => {
    expect(filesNamed(path.join(root, 'absent'), /./)).toEqual([]);
  });
});
