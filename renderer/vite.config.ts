import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Resolved from this file, not the working directory, so the build gives the same output whether
// it is started from the repo root (scripts/build.mjs) or from renderer/.
const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  // Relative asset URLs: the same bundle is served from app:// in Electron and http:// in browser mode.
  base: './',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/renderer', import.meta.url)),
    emptyOutDir: true,
    sourcemap: true,
    // The desktop shell loads from disk; one chunk warning threshold suited to that.
    chunkSizeWarningLimit: 1500,
  },
  server: { host: '127.0.0.1' },
});
