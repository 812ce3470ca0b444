// What every handler module is written against: the typed handler map and the host's services.
import type { z } from 'zod';
import type { ApiMethod, ApiOutputs, inputs } from '../../../shared/api.js';
import type { ChatEngine } from '../../agent/chat.js';
import type { AttachmentStore } from '../../attachments/store.js';
import type { BackupService } from '../../backups/service.js';
import type { EraseEverything } from '../../backups/erase.js';
import type { SelfLayer } from '../../companion/self-layer.js';
import type { Conversations } from '../../conversations/conversations.js';
import type { Database } from '../../db/open.js';
import type { Devices } from '../../devices/devices.js';
import type { SearchByMeaning } from '../../embed/search-by-meaning.js';
import type { HostEvents } from '../../events/events.js';
import type { Trash } from '../../forgetting/trash.js';
import type { EntityStore } from '../../graph/store.js';
import type { ImportService } from '../../imports/apply-service.js';
import type { Recall } from '../../memory/recall/index.js';
import type { MemoryStore } from '../../memory/store.js';
import type { LocalModels } from '../../models/local-models.js';
import type { Providers } from '../../providers/providers.js';
import type { SecretStore } from '../../settings/secrets.js';
import type { SettingsStore } from '../../settings/settings.js';
import type { HistoryReader } from '../../sleep/history.js';
import type { Napper } from '../../sleep/nap.js';
import type { SleepService } from '../../sleep/service.js';
import type { VaultService } from '../../vault/service.js';
import type { Log } from '../../../shared/log.js';
import type { BrowserLinkControl } from '../types.js';

/** The typed handler map: each method receives its already-validated input. */
export type Handlers = { [K in ApiMethod]: (input: z.output<(typeof inputs)[K]>) => Promise<ApiOutputs[K]> };

/** The handlers of one domain: the methods named `<domain>.…`. */
export type DomainHandlers<D extends string> = Pick<Handlers, Extract<ApiMethod, `${D}.${string}`>>;

/** Everything createHost builds, as the handlers see it. */
export interface HostServices {
  version: string;
  dataDir: string;
  mode: 'electron' | 'browser';
  /** Problems found at start (a reset setting, an unreadable secrets file), shown once in the window. */
  notices: readonly string[];
  /** Probe for model servers on this machine when asked. */
  detectLocalServers: boolean;
  now: () => Date;
  log: Log;
  /** For the sleep room's read functions (sleep/read.ts), which own their SQL. */
  db: Database;
  /** A database named when starting (serve --database, ANIMA_DATABASE): it wins over the choice in Settings → Data. */
  databaseFixed: boolean;
  events: HostEvents;
  secrets: SecretStore;
  settings: SettingsStore;
  providers: Providers;
  localModels: LocalModels;
  meaning: SearchByMeaning;
  selfLayer: SelfLayer;
  conversations: Conversations;
  memories: MemoryStore;
  recall: Recall;
  graph: EntityStore;
  chat: ChatEngine;
  /** Images attached to messages: files in the data folder. */
  attachments: AttachmentStore;
  /** Daytime memory: the handlers tell it when the person leaves a conversation. */
  napper: Napper;
  sleep: SleepService;
  /** "Read my imported history": the catch-up over imported days. */
  history: HistoryReader;
  /** Safety copies, the backup folder and its schedule, restore. */
  backups: BackupService;
  /** "Erase everything": a fresh data folder in place of this one. */
  erase: EraseEverything;
  /** Other apps' exports: uploads, previews, the running import, a card's blocks. */
  imports: ImportService;
  /** Deleting conversations (the trash, its purge) and keeping them off the record. */
  trash: Trash;
  /** The vault folder kept in step with memory. */
  vault: VaultService;
  /** Devices paired over the local network: their tokens, the pairing secret, where the LAN listener is. */
  devices: Devices;
  /** Browser mode's link (port and token of the data folder); absent in the desktop app and tests. */
  browserLink?: BrowserLinkControl;
}
