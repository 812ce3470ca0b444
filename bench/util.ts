// Small helpers shared by the benchmarks: medians (this machine is shared and noisy), output files.
import fs from 'node:fs';
import path from 'node:path';

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Prints the result and writes it to bench/results/<name>.json. */
export function report(name: string, result: Record<string, unknown>): void {
  const dir = path.resolve('bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(JSON.stringify(result, null, 2));
  console.log(`written to ${path.relative(process.cwd(), file)}`);
}

/** The LoCoMo files in `dir` (*.json, in natural order); exits 2 with the reason when there are none. */
export function locomoFiles(dir: string): string[] {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    console.error(`--data: ${dir} is not a directory`);
    process.exit(2);
  }
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.toLowerCase().endsWith('.json'))
    .sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  if (files.length === 0) {
    console.error(`--data: no .json files in ${dir}`);
    process.exit(2);
  }
  return files;
}
