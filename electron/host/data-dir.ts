// Where a person's companion lives on disk. The desktop app and browser mode use the same folder
// (Electron's userData + /data), so switching between them keeps one companion.
import os from 'node:os';
import path from 'node:path';

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  if (env.ANIMA_DATA_DIR) return path.resolve(env.ANIMA_DATA_DIR);
  const home = os.homedir();
  const appDir =
    platform === 'darwin'
      ? path.join(home, 'Library', 'Application Support', 'Anima')
      : platform === 'win32'
        ? path.join(env.APPDATA ?? path.join(home, 'AppData', 'Roaming'), 'Anima')
        : path.join(env.XDG_CONFIG_HOME ?? path.join(home, '.config'), 'Anima');
  return path.join(appDir, 'data');
}
