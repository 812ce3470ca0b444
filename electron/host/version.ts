// The app's version, said in exports, backups and `anima --version`. A bundle (dist/, the desktop
// app) has it baked in by scripts/build.mjs, since package.json is not beside it; run from source,
// it is read from package.json.
import { createRequire } from 'node:module';

declare const ANIMA_BUILD_VERSION: string | undefined;

export function appVersion(): string {
  if (typeof ANIMA_BUILD_VERSION === 'string') return ANIMA_BUILD_VERSION;
  return (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
}
