// Playwright's global setup: the run's one temporary folder (electron/testing/temp-root.ts), removed
// when the run ends.
import { runTempRoot } from '../electron/testing/temp-root.js';

export default function setup(): () => void {
  return runTempRoot('anima-e2e-run-');
}
