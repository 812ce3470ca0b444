// A download's progress as the `models.progress` event carries it: bytes done of the total, the
// file being fetched, a smoothed speed and the time left; at most one event per interval except
// when the phase or the file changes.
import type { ModelDownloadProgress } from '../../shared/api.js';

/** A download's progress; the `models.progress` event carries it unchanged. */
export type DownloadProgress = ModelDownloadProgress;

const SPEED_TIME_CONSTANT_MS = 3000;

export class ProgressMeter {
  private total = 0;
  private done = 0;
  private fileCount = 0;
  private speed = 0;
  private lastEmit = 0;
  private sampleAt = 0;
  private sampleBytes = 0;
  private current: Pick<DownloadProgress, 'phase' | 'file' | 'fileIndex'> = { phase: 'checking', fileIndex: 0 };

  constructor(
    private readonly id: string,
    private readonly intervalMs: number,
    private readonly listener?: (progress: DownloadProgress) => void,
  ) {}

  start(total: number, already: number, fileCount: number): void {
    this.total = total;
    this.done = already;
    this.fileCount = fileCount;
    this.sampleAt = performance.now();
  }

  add(bytes: number): void {
    this.done += bytes;
    if (bytes > 0) this.sampleBytes += bytes;
    this.emit({}, false);
  }

  finish(): void {
    this.done = this.total;
    this.emit({ phase: 'done', file: undefined }, true);
  }

  emit(change: Partial<Pick<DownloadProgress, 'phase' | 'file' | 'fileIndex'>>, force: boolean): void {
    this.current = { ...this.current, ...change };
    const now = performance.now();
    if (!force && now - this.lastEmit < this.intervalMs) return;
    this.sample(now);
    this.lastEmit = now;
    if (!this.listener) return;
    const left = this.total - this.done;
    try {
      this.listener({
        id: this.id,
        ...this.current,
        fileCount: this.fileCount,
        bytesDone: this.done,
        bytesTotal: this.total,
        bytesPerSecond: Math.round(this.speed),
        secondsLeft: this.current.phase === 'done' ? 0 : this.speed > 0 ? left / this.speed : null,
      });
    } catch {
      // The listener's problem, not the download's.
    }
  }

  /** Exponential smoothing over about three seconds: steady numbers without lagging a real change. */
  private sample(now: number): void {
    const elapsed = now - this.sampleAt;
    if (elapsed < 20 || this.sampleBytes === 0) return;
    const instant = (this.sampleBytes * 1000) / elapsed;
    const weight = this.speed === 0 ? 1 : 1 - Math.exp(-elapsed / SPEED_TIME_CONSTANT_MS);
    this.speed += (instant - this.speed) * weight;
    this.sampleAt = now;
    this.sampleBytes = 0;
  }
}
