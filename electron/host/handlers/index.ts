// One handler module per domain, combined into the one typed map the API is: a method missing from
// every module, or implemented twice, is a type error here.
import { appHandlers } from './app.js';
import { archiveHandlers } from './archive.js';
import { attachmentsHandlers } from './attachments.js';
import { backupsHandlers } from './backups.js';
import { chatHandlers } from './chat.js';
import { conversationsHandlers } from './conversations.js';
import { devicesHandlers } from './devices.js';
import { graphHandlers } from './graph.js';
import { importsHandlers } from './imports.js';
import { memoriesHandlers } from './memories.js';
import { modelsHandlers } from './models.js';
import { providersHandlers } from './providers.js';
import { selfHandlers } from './self.js';
import { settingsHandlers } from './settings.js';
import { diaryHandlers, sleepHandlers } from './sleep.js';
import { storageHandlers } from './storage.js';
import type { Handlers, HostServices } from './types.js';
import { vaultHandlers } from './vault.js';

export type { Handlers, HostServices } from './types.js';

export function createHandlers(s: HostServices): Handlers {
  return {
    ...appHandlers(s),
    ...settingsHandlers(s),
    ...providersHandlers(s),
    ...modelsHandlers(s),
    ...selfHandlers(s),
    ...conversationsHandlers(s),
    ...memoriesHandlers(s),
    ...chatHandlers(s),
    ...attachmentsHandlers(s),
    ...sleepHandlers(s),
    ...diaryHandlers(s),
    ...graphHandlers(s),
    ...archiveHandlers(s),
    ...importsHandlers(s),
    ...backupsHandlers(s),
    ...vaultHandlers(s),
    ...devicesHandlers(s),
    ...storageHandlers(s),
  };
}
