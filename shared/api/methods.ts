// The method table: every method's input schema (from its domain's file) and output type, and the
// checks every transport runs on a call.
import { z } from 'zod';
import { appInputs, type AppOutputs } from './app.js';
import { archiveInputs, type ArchiveOutputs } from './archive.js';
import { attachmentsInputs, type AttachmentsOutputs } from './attachments.js';
import { backupsInputs, type BackupsOutputs } from './backups.js';
import { conversationsInputs, type ConversationsOutputs } from './conversations.js';
import { devicesInputs, type DevicesOutputs } from './devices.js';
import { diaryInputs, type DiaryOutputs } from './diary.js';
import { storableValue, TooDeeplyNested } from '../text.js';
import { ApiError } from './errors.js';
import { graphInputs, type GraphOutputs } from './graph.js';
import { importsInputs, type ImportsOutputs } from './imports.js';
import { memoryInputs, type MemoryOutputs } from './memory.js';
import { modelsInputs, type ModelsOutputs } from './models.js';
import { providersInputs, type ProvidersOutputs } from './providers.js';
import { selfInputs, type SelfOutputs } from './self.js';
import { settingsInputs, type SettingsOutputs } from './settings.js';
import { sleepInputs, type SleepOutputs } from './sleep.js';
import { storageInputs, type StorageOutputs } from './storage.js';
import { vaultInputs, type VaultOutputs } from './vault.js';

export const inputs = {
  ...appInputs,
  ...settingsInputs,
  ...providersInputs,
  ...modelsInputs,
  ...selfInputs,
  ...conversationsInputs,
  ...attachmentsInputs,
  ...memoryInputs,
  ...sleepInputs,
  ...diaryInputs,
  ...graphInputs,
  ...archiveInputs,
  ...importsInputs,
  ...backupsInputs,
  ...vaultInputs,
  ...devicesInputs,
  ...storageInputs,
} as const;

export type ApiMethod = keyof typeof inputs;
export type ApiInput<K extends ApiMethod> = z.input<(typeof inputs)[K]>;

/** Every method's output type: the union of each domain's table. */
export interface ApiOutputs
  extends
    AppOutputs,
    SettingsOutputs,
    ProvidersOutputs,
    ModelsOutputs,
    SelfOutputs,
    ConversationsOutputs,
    AttachmentsOutputs,
    MemoryOutputs,
    SleepOutputs,
    DiaryOutputs,
    ArchiveOutputs,
    GraphOutputs,
    ImportsOutputs,
    BackupsOutputs,
    VaultOutputs,
    DevicesOutputs,
    StorageOutputs {}

// Compile-time check that every method has an output type and vice versa.
type _SameKeys = [ApiMethod] extends [keyof ApiOutputs] ? ([keyof ApiOutputs] extends [ApiMethod] ? true : never) : never;
const _sameKeys: _SameKeys = true;
void _sameKeys;

/** The whole API as functions: implemented by the host, called through a transport. */
export type AnimaApi = {
  [K in ApiMethod]: (input: ApiInput<K>) => Promise<ApiOutputs[K]>;
};

export function isApiMethod(name: string): name is ApiMethod {
  return Object.prototype.hasOwnProperty.call(inputs, name);
}

/**
 * Validate a call's input; throws ApiError('invalid_input') naming the first bad field. Every string
 * is made storable first (NUL and lone surrogates become U+FFFD): this is where a payload's text enters.
 */
export function parseInput<K extends ApiMethod>(method: K, raw: unknown): z.output<(typeof inputs)[K]> {
  let storable: unknown;
  try {
    storable = storableValue(raw ?? {});
  } catch (err) {
    if (err instanceof TooDeeplyNested) throw new ApiError('invalid_input', `Invalid input for ${method} — ${err.message}`);
    throw err;
  }
  const result = inputs[method].safeParse(storable);
  if (result.success) return result.data as z.output<(typeof inputs)[K]>;
  const issue = result.error.issues[0];
  const field = issue?.path.join('.') || undefined;
  const what = field ? `${field}: ${issue?.message}` : (issue?.message ?? 'invalid input');
  throw new ApiError('invalid_input', `Invalid input for ${method} — ${what}`, field);
}
