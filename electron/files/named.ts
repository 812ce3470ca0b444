// A folder's files whose names match a pattern, with their sizes: how the rooms that keep files by a
// name they chose (attachments' images, the companion's pictures) list them. No table, no room of its own.
import fs from 'node:fs';
import path from 'node:path';

/**
 * The files directly in `dir` whose names match `pattern`, sorted by name, with their sizes. A folder
 * that cannot be read lists nothing; anything that is not a regular file (a folder, a link's target
 * gone) or vanishes while listed is left out.
 */
export function filesNamed(dir: string, pattern: RegExp): { name: string; bytes: number }[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const out: { name: string; bytes: number }[] = [];
  for (const name of names.sort()) {
    if (!pattern.test(name)) continue;
    const stat = fs.statSync(path.join(dir, name), { throwIfNoEntry: false });
    if (stat?.isFile()) out.push({ name, bytes: stat.size });
  }
  return out;
}
