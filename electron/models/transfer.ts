// One file from the model host into `.partial/`: resumed with HTTP Range from what is already there,
// appended and hashed as bytes arrive, retried with backoff while attempts bring no new bytes, and
// checked against the listing before it counts.
import fs from 'node:fs/promises';
import path from 'node:path';
import { ModelError, type CatalogEntry } from './catalog.js';
import { describeError, fileSize, onDisk, writeAll } from './disk-io.js';
import type { ProgressMeter } from './download-progress.js';
import { checkArrivedFile, FileHash, type RemoteFile } from './host-files.js';
import { IdleTimer, isRetryable, RetryableError, type HostSession } from './host-session.js';

export interface Transfer {
  session: HostSession;
  entry: Pick<CatalogEntry, 'id' | 'name'>;
  meter: Pick<ProgressMeter, 'add'>;
}

/** What of a file is on disk so far, and the checksums of those bytes. */
interface Received {
  have: number;
  hash: FileHash;
}

/** Fetches one file to `target`, resuming what is there; returns its verified sha256. */
export async function fetchFile(transfer: Transfer, file: RemoteFile, target: string): Promise<string> {
  const { session, entry } = transfer;
  await onDisk(() => fs.mkdir(path.dirname(target), { recursive: true }));
  const state: Received = { have: (await fileSize(target)) ?? 0, hash: new FileHash(file.size) };
  if (state.have > 0) await state.hash.updateFromFile(target, state.have, session.signal);
  else await onDisk(() => fs.writeFile(target, ''));
  session.throwIfCancelled();

  let failures = 0;
  while (state.have < file.size) {
    const before = state.have;
    try {
      await fetchInto(transfer, file, target, state);
      // A response may end early without an error: a CDN serving bounded ranges, or a body
      // without a declared length. Ask for the rest; a host that has no more answers 416.
      if (state.have < file.size) throw new RetryableError('the response ended early');
    } catch (error) {
      if (session.signal.aborted) throw session.cancelled();
      if (!isRetryable(error)) throw error;
      failures = state.have > before ? 1 : failures + 1;
      if (failures > session.retries) {
        throw new ModelError(
          'network',
          `Downloading ${file.path} of ${entry.name} kept failing (${describeError(error)}). What arrived is kept; try again later.`,
          file.path,
        );
      }
      await session.backoff(failures);
    }
  }
  return checkArrivedFile(target, file, state.hash, entry.name);
}

/** One HTTP request for the rest of a file; appends and hashes as bytes arrive. */
async function fetchInto(transfer: Transfer, file: RemoteFile, target: string, state: Received): Promise<void> {
  const { session, entry, meter } = transfer;
  const url = `${session.host}/${entry.id}/resolve/main/${file.path.split('/').map(encodeURIComponent).join('/')}`;
  const headers: Record<string, string> = {};
  if (state.have > 0) headers.range = `bytes=${state.have}-`;
  const idle = new IdleTimer(session.idleTimeoutMs);
  try {
    const response = await session.request(url, headers, idle.signal);
    /** Removes what arrived of the file: its bytes cannot be the listed ones. */
    const discard = async (message: string): Promise<ModelError> => {
      await fs.rm(target, { force: true });
      return new ModelError('integrity', message, file.path);
    };
    const status = response.status;
    if (status === 401 || status === 403 || status === 404) {
      await response.body?.cancel();
      throw new ModelError('model_not_found', `${session.label} does not give out ${file.path} of "${entry.id}" (HTTP ${status}).`, file.path);
    }
    if (status === 416) {
      // The host has no bytes past what we hold, yet its listing promised more.
      await response.body?.cancel();
      throw await discard(`${file.path} of ${entry.name} on ${session.label} is shorter than its listing says (${file.size} bytes). The file was discarded.`);
    }
    if (status === 429 || status >= 500) {
      await response.body?.cancel();
      throw new RetryableError(`HTTP ${status}`);
    }
    if (status !== 200 && status !== 206) {
      await response.body?.cancel();
      throw new ModelError('network', `${session.label} answered HTTP ${status} for ${file.path} of "${entry.id}".`, file.path);
    }
    if (status === 206 && rangeStart(response.headers.get('content-range')) !== state.have) {
      await response.body?.cancel();
      await restart(transfer, target, state, file.size);
      throw new RetryableError('the host sent a different part of the file than asked for');
    }
    const declared = declaredSize(response);
    if (declared !== undefined && declared !== file.size) {
      await response.body?.cancel();
      throw await discard(
        `${file.path} of ${entry.name} has ${declared} bytes on ${session.label} but its file list says ${file.size}. ` +
          'The file was discarded; the host may be mid-update, try again later or another model host.',
      );
    }
    if (status === 200 && state.have > 0) {
      // The host ignored the Range request and is sending the whole file: start over with it.
      await restart(transfer, target, state, file.size);
    }
    if (!response.body) throw new RetryableError('an empty response');
    const handle = await onDisk(() => fs.open(target, 'a'));
    try {
      for await (const chunk of response.body) {
        idle.touch();
        const bytes = chunk as Uint8Array;
        if (state.have + bytes.length > file.size) {
          await handle.close().catch(() => undefined);
          throw await discard(`${file.path} of ${entry.name} is larger than the ${file.size} bytes its listing says. The file was discarded.`);
        }
        await onDisk(() => writeAll(handle, bytes));
        state.hash.update(bytes);
        state.have += bytes.length;
        meter.add(bytes.length);
      }
      // So a crash right after the rename cannot leave a model folder with empty files.
      if (state.have === file.size) await onDisk(() => handle.sync());
    } finally {
      await handle.close().catch(() => undefined);
    }
  } catch (error) {
    if (idle.fired && !session.signal.aborted) throw new RetryableError(`no data for ${Math.round(idle.ms / 1000)} s`);
    throw error;
  } finally {
    idle.stop();
  }
}

async function restart(transfer: Transfer, target: string, state: Received, size: number): Promise<void> {
  await onDisk(() => fs.writeFile(target, ''));
  transfer.meter.add(-state.have);
  state.have = 0;
  state.hash = new FileHash(size);
}

/** The whole file's size as the response declares it (Content-Range total, or Content-Length of a 200). */
function declaredSize(response: Response): number | undefined {
  if (response.status === 206) {
    const match = /\/(\d+)$/.exec(response.headers.get('content-range')?.trim() ?? '');
    return match ? Number(match[1]) : undefined;
  }
  // A compressed body's length says nothing about the file.
  const encoding = response.headers.get('content-encoding');
  if (encoding && encoding !== 'identity') return undefined;
  const length = response.headers.get('content-length');
  return length && /^\d+$/.test(length) ? Number(length) : undefined;
}

function rangeStart(contentRange: string | null): number | undefined {
  const match = contentRange && /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(contentRange.trim());
  return match ? Number(match[1]) : undefined;
}
