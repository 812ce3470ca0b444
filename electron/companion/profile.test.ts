// The companion's name and face through the API, on real PGlite: renaming rewrites the identity
// block and the graph's node (undoable, the old name kept as an alias); a picture is stored by its
// bytes in the data folder; bad input is refused in words and changes nothing.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestHost, tempDataDir } from '../testing/host.js';
import { rejection } from '../testing/rejection.js';
import type { Host } from '../host/types.js';

const hosts: Host[] = [];
const dirs: string[] = [];
async function start(dataDir = tempDataDir()) {
  dirs.push(dataDir);
  const host = await startTestHost({ dataDir });
  hosts.push(host);
  return host;
}
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.close()));
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const PNG = `data:image/png;base64,${fs.readFileSync(path.resolve('build', 'icon.png')).toString('base64')}`;

describe("the companion's name and face", () => {
  it('starts as Anima with its initial; a rename says the new name in the identity block and on the graph', async () => {
    const host = await start();
    expect(await host.api['self.profile']({})).toEqual({ name: 'Anima', avatar: null, color: 'teal' });
    const renamed = await host.api['self.rename']({ name: '  Mira ' });
    expect(renamed.name).toBe('Mira');
    const identity = (await host.api['self.list']({})).find((b) => b.key === 'identity')!;
    expect(identity.content).toMatch(/^I am Mira, a companion/);
    expect(identity.isDefault).toBe(false);
    const node = await host.api['graph.entity']({ id: 1 });
    expect(node.entity.name).toBe('Mira');
    expect(node.entity.aliases).toContain('Anima');
    // Saving the identity block by hand renames too.
    await host.api['self.update']({ key: 'identity', content: '我叫小米。我住在这台电脑里。' });
    expect((await host.api['self.profile']({})).name).toBe('小米');
    expect((await host.api['graph.entity']({ id: 1 })).entity.name).toBe('小米');
    // Reset: the default name again.
    await host.api['self.reset']({ key: 'identity' });
    expect((await host.api['self.profile']({})).name).toBe('Anima');
  });

  it('refuses a name that cannot be one, and changes nothing', async () => {
    const host = await start();
    const before = (await host.api['self.list']({})).find((b) => b.key === 'identity')!.content;
    for (const name of ['', '   ', 'Mira, the wise', 'x'.repeat(41)]) {
      const err = await rejection(host.call('self.rename', { name }));
      expect(err.code).toBe('invalid_input');
      expect(err.field).toBe('name');
    }
    expect((await host.api['self.list']({})).find((b) => b.key === 'identity')!.content).toBe(before);
  });

  it('stores a picture by its bytes in the data folder; refuses what is not one; back to the initial on a colour', async () => {
    const dir = tempDataDir();
    const host = await start(dir);
    const withPicture = await host.api['self.setAvatar']({ image: PNG });
    expect(withPicture.avatar).toBe(PNG);
    const file = (await host.api['settings.get']({})).companion.avatar!;
    expect(file).toMatch(/^avatar-[0-9a-f]{16}\.png$/);
    expect(fs.readFileSync(path.join(dir, 'companion', file))).toEqual(fs.readFileSync(path.resolve('build', 'icon.png')));

    // Not a picture (a text file called an image), too large, or no data URL at all: refused, nothing changes.
    const fake = `data:image/png;base64,${Buffer.from('hello, I am not a picture').toString('base64')}`;
    const big = `data:image/png;base64,${Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(560 * 1024)]).toString('base64')}`;
    for (const image of [fake, 'https://example.com/cat.png']) {
      const err = await rejection(host.call('self.setAvatar', { image }));
      expect(err).toMatchObject({ code: 'invalid_input', field: 'image' });
    }
    expect((await rejection(host.call('self.setAvatar', { image: big }))).code).toBe('invalid_input');
    expect((await host.api['settings.get']({})).companion.avatar).toBe(file);
    expect((await rejection(host.call('self.setAvatar', { color: 'neon' }))).field).toBe('color');

    const initial = await host.api['self.setAvatar']({ image: null, color: 'violet' });
    expect(initial).toMatchObject({ avatar: null, color: 'violet' });
    // The picture the person chose stays on disk (choosing it again costs nothing).
    expect(fs.existsSync(path.join(dir, 'companion', file))).toBe(true);
    // settings.update may only switch the greeting.
    expect((await rejection(host.call('settings.update', { companion: { avatar: 'avatar-0000000000000000.png' } }))).code).toBe('invalid_input');
  });
});
