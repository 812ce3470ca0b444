// One companion turn: store the person's words first, then stream the reply into a placeholder row
// that is saved as it grows, so Stop, a dead provider or a crash all leave what was said on disk.
import { ApiError, type ApiErrorShape, type Message, type SendResult } from '../../shared/api.js';
import { sleepDay } from '../../shared/sleep-day.js';
import type { AttachmentStore } from '../attachments/store.js';
import { photoNote, type Conversations, type RollingSummary } from '../conversations/conversations.js';
import type { HostEvents } from '../events/events.js';
import { chatGeneration, chatHistoryContext, type Providers } from '../providers/providers.js';
import type { SettingsStore } from '../settings/settings.js';
import { ProviderError, type ChatTurn, type ToolCall, type ToolSpec } from '../llm/types.js';
import {
  charsPerTokenSample,
  ContextOverflowError,
  estimateTokens,
  fitToContext,
  historyBudget,
  turnsBeyond,
  userFirst,
  type FitOptions,
} from '../llm/context.js';
import { imageFamily, imageTokens, type ImageFamily } from '../../shared/image-tokens.js';
import { buildSystemPrompt } from '../companion/prompt.js';
import { parseCitations } from '../memory/citations.js';
import type { SelfLayer } from '../companion/self-layer.js';
import { providerAbilities } from '../providers/abilities.js';
import { seesImages, type ImageRef } from '../../shared/api/attachments.js';

/** Tools the companion may call in one turn. */
export interface ToolRegistry {
  specs(): ToolSpec[];
  run(call: ToolCall): Promise<string>;
}

export interface TurnContext {
  conversationId: string;
  /** The person's message this reply answers. */
  userMessageId: string;
  userText: string;
  /** The memories this request's system prompt carries (resident memory): passive recall leaves them out. */
  residentIds: readonly number[];
  /** The conversation is off the record: what is said in it must never become memory. */
  offRecord: boolean;
}

/** What long-term memory puts in the system prompt, and which memories that is. */
export interface PromptMemory {
  sections: { title?: string; body: string }[];
  residentIds: number[];
}

/**
 * What long-term memory adds to a turn. Kept behind this interface so the turn loop reads the same
 * with or without it (tests of the loop itself run without).
 */
export interface TurnMemory {
  /** Sections for the system prompt snapshot (resident memory, citation rules), as they are now. */
  promptSections(): Promise<PromptMemory>;
  tools(ctx: TurnContext): ToolRegistry;
  /** Passive recall: a runtime-only turn to put before the person's message (never stored). */
  passive(ctx: TurnContext, replyId: string): Promise<ChatTurn | null>;
  /** Citations in a stored message body count as references: for a reply, only of memories its requests showed (`shown`). */
  cited(messageId: string, text: string, shown?: readonly number[]): Promise<void>;
  /** One request put these memories before the model (each counts once more in injected_count). */
  showed(ids: readonly number[]): Promise<void>;
}

export const noMemory: TurnMemory = {
  promptSections: async () => ({ sections: [], residentIds: [] }),
  tools: () => ({ specs: () => [], run: async () => 'No tools are available.' }),
  passive: async () => null,
  cited: async () => {},
  showed: async () => {},
};

/**
 * Daytime memory (the nap), told what the turns do. Its calls return at once and never throw: a nap
 * runs in the background and can neither slow nor fail a turn.
 */
export interface DaytimeMemory {
  /** A turn finished in this conversation: its quiet time starts again. */
  touched(conversationId: string): void;
  /** The oldest turns, through this message, are about to leave the context window: note and summarise them. */
  overflow(conversationId: string, throughMessageId: string): void;
}

/** The history is about to outgrow the window when it fills this share of its room… */
export const OVERFLOW_AT = 0.8;
/** …and the nap then summarises every turn beyond this share, so the next summary is a while off. */
export const SUMMARISE_BEYOND = 0.5;
/** Heads the rolling summary, after the system prompt, once older turns are left out of a request. */
export const EARLIER_HEADING = '# Earlier in this conversation';

/** The name providers see on the runtime-only passive recall message (never stored). */
export const PASSIVE_MESSAGE_NAME = 'passive_memory_context';

/** A model that keeps calling tools is stopped after this many rounds. */
const MAX_TOOL_ROUNDS = 4;
/** Streamed text is written to disk at most this often. */
const SAVE_INTERVAL_MS = 250;

export interface ChatDeps {
  conversations: Conversations;
  providers: Providers;
  settings: SettingsStore;
  selfLayer: SelfLayer;
  events: HostEvents;
  memory?: TurnMemory;
  daytime?: DaytimeMemory;
  /** Images attached to messages (files in the data folder): read into the requests of models that see. */
  attachments?: AttachmentStore;
  now: () => Date;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
}

interface ActiveReply {
  controller: AbortController;
  done: Promise<void>;
}

export class ChatEngine {
  private readonly active = new Map<string, ActiveReply>();
  private readonly memory: TurnMemory;

  constructor(private readonly deps: ChatDeps) {
    this.memory = deps.memory ?? noMemory;
  }

  private assertIdle(conversationId: string): void {
    if (this.active.has(conversationId)) {
      throw new ApiError('conflict', 'I am still answering in this conversation — stop me first, or wait for me to finish.');
    }
  }

  async send(conversationId: string, content: string, imageIds?: readonly string[]): Promise<SendResult> {
    const { conversations } = this.deps;
    const conversation = await conversations.get(conversationId);
    this.assertIdle(conversationId);
    // Attached images are files already (attachments.upload); the message keeps their references.
    const images = imageIds?.length ? await this.attachments().refs(imageIds) : undefined;
    // Stored before any model call, exactly as written: whatever happens next, this is kept.
    const userMessage = await conversations.append({ conversationId, role: 'user', content, status: 'complete', images });
    if (conversation.messageCount === 0 && content.trim()) await conversations.autoTitle(conversationId, content);
    await this.citeQuietly(userMessage.id, content);
    return { userMessage, assistantMessage: await this.startReply(conversationId) };
  }

  /**
   * Writes a reply again: `messageId` (a reply on the chosen line), or by default the replies to the
   * person's last message. The new reply is a version beside the old one (same parent); the old one,
   * with whatever followed it, stays as an earlier branch.
   */
  async regenerate(conversationId: string, messageId?: string): Promise<SendResult> {
    const { conversations } = this.deps;
    await conversations.get(conversationId);
    this.assertIdle(conversationId);
    const visible = await conversations.messages(conversationId);
    let parentId: string | null;
    if (messageId) {
      const index = visible.findIndex((m) => m.id === messageId && m.role === 'assistant');
      if (index < 0) throw new ApiError('conflict', 'Only a reply on the chosen line can be written again.', 'messageId');
      parentId = await conversations.parentOf(messageId);
    } else {
      const lastUser = visible.findLast((m) => m.role === 'user');
      if (!lastUser) throw new ApiError('conflict', 'There is nothing to answer yet.');
      parentId = lastUser.id;
    }
    // The person's message the new reply answers: the last of theirs up to its parent.
    const userMessage = visible.slice(0, parentId ? visible.findIndex((x) => x.id === parentId) + 1 : 0).findLast((m) => m.role === 'user');
    if (!userMessage) throw new ApiError('conflict', 'There is nothing to answer yet.');
    const assistantMessage = await this.startReply(conversationId, (placeholder) => conversations.chooseNew(conversationId, placeholder.id), undefined, {
      parentId,
    });
    return { userMessage, assistantMessage };
  }

  /** Edits the person's last message on the chosen line (see edit). */
  async editLast(conversationId: string, content: string): Promise<SendResult> {
    const { conversations } = this.deps;
    await conversations.get(conversationId);
    this.assertIdle(conversationId);
    const lastUser = (await conversations.messages(conversationId)).findLast((m) => m.role === 'user');
    if (!lastUser) throw new ApiError('conflict', 'There is no message of yours to edit yet.');
    return this.edit(lastUser.id, content);
  }

  /**
   * Edits any message of the person's on the chosen line: the edited text is a new message beside the
   * original (same parent), answered again; the original and what followed it stay as an earlier branch.
   */
  async edit(messageId: string, content: string): Promise<SendResult> {
    const { conversations } = this.deps;
    const original = await conversations.message(messageId);
    if (original.role !== 'user' || original.replacedBy !== null)
      throw new ApiError('conflict', 'Only a message of yours on the chosen line can be edited.', 'messageId');
    const conversationId = original.conversationId;
    await conversations.get(conversationId);
    this.assertIdle(conversationId);
    const parentId = await conversations.parentOf(messageId);
    const userMessage = await conversations.append({ conversationId, role: 'user', content, status: 'complete', parentId, images: original.images });
    await conversations.chooseNew(conversationId, userMessage.id);
    await this.citeQuietly(userMessage.id, content);
    return { userMessage, assistantMessage: await this.startReply(conversationId) };
  }

  /**
   * "Continue": the last message of the chosen line, a reply with words (cut off, stopped, or
   * finished too soon), is written on — the model gets it as its own unfinished turn, and what comes
   * is appended to it.
   */
  async continueReply(conversationId: string): Promise<SendResult> {
    const { conversations } = this.deps;
    await conversations.get(conversationId);
    this.assertIdle(conversationId);
    const visible = await conversations.messages(conversationId);
    const last = visible.at(-1);
    if (!last || last.role !== 'assistant' || !last.content.trim() || (last.status !== 'partial' && last.status !== 'complete')) {
      throw new ApiError('conflict', 'Only the last reply, once it has words, can be continued.');
    }
    const userMessage = visible.findLast((m) => m.role === 'user');
    if (!userMessage) throw new ApiError('conflict', 'There is nothing to answer yet.');
    const assistantMessage = await this.startReply(conversationId, undefined, undefined, { continueFrom: last });
    return { userMessage, assistantMessage };
  }

  /** Chooses a version: the line through it is what the conversation continues from. */
  async choose(messageId: string): Promise<string> {
    const m = await this.deps.conversations.message(messageId);
    this.assertIdle(m.conversationId);
    const conversationId = await this.deps.conversations.choose(messageId);
    this.deps.events.emit('conversations.changed', { conversationId });
    return conversationId;
  }

  /** Deletes one message (undoable with restoreMessage); never one being written. */
  async deleteMessage(messageId: string): Promise<string> {
    const m = await this.deps.conversations.message(messageId);
    this.assertIdle(m.conversationId);
    const conversationId = await this.deps.conversations.removeMessage(messageId, this.deps.now());
    this.deps.events.emit('conversations.changed', { conversationId });
    return conversationId;
  }

  async restoreMessage(messageId: string): Promise<string> {
    const m = await this.deps.conversations.message(messageId);
    this.assertIdle(m.conversationId);
    const conversationId = await this.deps.conversations.restoreMessage(messageId);
    this.deps.events.emit('conversations.changed', { conversationId });
    return conversationId;
  }

  /**
   * The companion speaks first (agent/greeting.ts): a reply with no new message of the person's,
   * asked for by a note that reaches the model as the last turn and is never stored.
   */
  async speakFirst(conversationId: string, note: string): Promise<Message> {
    await this.deps.conversations.get(conversationId);
    this.assertIdle(conversationId);
    return this.startReply(conversationId, undefined, note);
  }

  async stop(conversationId: string): Promise<boolean> {
    const reply = this.active.get(conversationId);
    if (!reply) return false;
    reply.controller.abort();
    await reply.done;
    return true;
  }

  /** Stops every reply (each is kept as partial) — used when the host closes. */
  async stopAll(): Promise<void> {
    await Promise.all([...this.active.keys()].map((id) => this.stop(id)));
  }

  /** A citation that cannot be recorded must never cost the person their message or reply. */
  private async citeQuietly(messageId: string, text: string, shown?: readonly number[]): Promise<void> {
    try {
      await this.memory.cited(messageId, text, shown);
    } catch (err) {
      this.deps.log('error', `could not record citations of ${messageId}: ${(err as Error).message}`);
    }
  }

  private attachments(): AttachmentStore {
    if (!this.deps.attachments) throw new ApiError('invalid_input', 'Images cannot be attached here.', 'images');
    return this.deps.attachments;
  }

  /**
   * The images of the newest turns that carry them (at most MAX_IMAGES_SENT), read into the turns for
   * a model that sees; every other turn keeps the note its words were given in buildTurns ("[photo
   * shared]"). Returns how many were read in.
   */
  private async readImages(turns: ChatTurn[], sees: boolean): Promise<number> {
    if (!sees || !this.deps.attachments) return 0;
    let sent = 0;
    for (let i = turns.length - 1; i >= 0 && sent < MAX_IMAGES_SENT; i--) {
      const turn = turns[i]!;
      const attached = turn.role === 'user' ? imagesOf.get(turn) : undefined;
      if (!attached || turn.role !== 'user' || sent + attached.images.length > MAX_IMAGES_SENT) continue;
      try {
        const bytes = await Promise.all(attached.images.map((image) => this.deps.attachments!.read(image.id)));
        turns[i] = { ...turn, content: attached.caption, images: bytes.map((b, k) => ({ type: attached.images[k]!.type, data: b.toString('base64') })) };
        sent += attached.images.length;
      } catch (err) {
        this.deps.log('warn', `an attached image was not read: ${(err as Error).message}`);
      }
    }
    return sent;
  }

  isStreaming(conversationId: string): boolean {
    return this.active.has(conversationId);
  }

  private async startReply(
    conversationId: string,
    beforeStream?: (placeholder: Message) => Promise<void>,
    note?: string,
    /** parentId: a new version's parent; continueFrom: a reply written on instead of a new one. */
    how: { parentId?: string | null; continueFrom?: Message } = {},
  ): Promise<Message> {
    const controller = new AbortController();
    // Claim the conversation before the first await so two quick sends cannot both start a reply.
    let settle!: () => void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    this.active.set(conversationId, { controller, done });
    try {
      const placeholder = how.continueFrom
        ? await this.deps.conversations.reopen(how.continueFrom.id)
        : await this.deps.conversations.append({ conversationId, role: 'assistant', content: '', status: 'streaming', parentId: how.parentId });
      await beforeStream?.(placeholder);
      this.deps.events.emit('conversations.changed', { conversationId });
      void this.stream(conversationId, placeholder, controller.signal, note, how.continueFrom ? placeholder.content : undefined).finally(() => {
        this.active.delete(conversationId);
        settle();
      });
      return placeholder;
    } catch (err) {
      this.active.delete(conversationId);
      settle();
      throw err;
    }
  }

  /** `prefix`: continuing a reply, the words it has already (what streams is appended). */
  private async stream(conversationId: string, placeholder: Message, signal: AbortSignal, note?: string, prefix?: string): Promise<void> {
    const { conversations, events, log } = this.deps;
    let text = prefix ?? '';
    let saved = text;
    let saving: Promise<void> = Promise.resolve();
    let lastSave = 0;
    let model: string | null = null;
    const save = () => {
      if (text === saved) return;
      const snapshot = text;
      saved = snapshot;
      lastSave = Date.now();
      saving = saving
        .then(() => conversations.saveProgress(placeholder.id, snapshot))
        .catch((err: Error) => {
          log('error', `could not save streamed text: ${err.message}`);
        });
    };

    let status: Message['status'] = 'complete';
    let error: ApiErrorShape | null = null;
    /** Every memory any request of this reply showed the model: only these can be cited. */
    const shown = new Set<number>();
    try {
      const { config, client } = await this.resolveChatProvider();
      model = config.model;
      // The token estimate as this connection's server counts (default rule until it reported a count).
      const charsPerToken = (await this.deps.providers.charsPerToken(config.id)) ?? undefined;
      const sees = seesImages(config, providerAbilities(config, false).images);
      // The pictures it will see count in the fit, by its family's documented estimate.
      const family = sees ? imageFamily(config.kind, config.baseUrl) : undefined;
      const { turns, context } = await this.buildTurns(conversationId, placeholder.id, chatHistoryContext(config), charsPerToken, note, prefix, family);
      // A model that sees gets the newest images; one that cannot keeps the note (the window said so in words).
      const imagesSent = await this.readImages(turns, sees);
      const registry = this.memory.tools(context);
      const tools = registry.specs();
      // Up to MAX_TOOL_ROUNDS rounds may call tools; if the last of them still did, one more round
      // may not, so the person always gets an answer rather than an empty reply.
      for (let round = 0; round <= MAX_TOOL_ROUNDS; round++) {
        const last = round === MAX_TOOL_ROUNDS;
        const calls: ToolCall[] = [];
        let roundText = '';
        const request = {
          model: config.model,
          messages: turns,
          tools: tools.length ? tools : undefined,
          toolChoice: last ? ('none' as const) : undefined,
          // The connection's generation settings (only those set): chat replies only; the sleep cycle keeps its own.
          ...chatGeneration(config.generation),
          signal,
        };
        const showing = memoriesShown(turns);
        for (const id of showing) shown.add(id);
        await this.memory.showed(showing);
        for await (const event of client.stream(request)) {
          if (event.type === 'text' && event.text) {
            text += event.text;
            roundText += event.text;
            events.emit('chat.delta', { conversationId, messageId: placeholder.id, text: event.text });
            if (Date.now() - lastSave >= SAVE_INTERVAL_MS) save();
          } else if (event.type === 'tool_call') {
            calls.push(event.call);
          } else if (event.type === 'done' && event.usage?.inputTokens && imagesSent === 0) {
            // (A request with images is not a sample: the server counts the pictures' tokens too.)
            // What the server counted for exactly these turns calibrates the next fit (a read and a write; a failure costs the turn nothing).
            const sample = charsPerTokenSample(turns, event.usage.inputTokens, request.tools);
            await this.deps.providers.calibrate(config.id, sample).catch((err: Error) => log('warn', `token estimate not calibrated: ${err.message}`));
          } else if (event.type === 'status') {
            // Only shown while the person waits (e.g. an on-device model loading); nothing is stored.
            events.emit('chat.status', { conversationId, messageId: placeholder.id, status: event.status, text: event.text });
          }
        }
        // A server that calls tools even when told not to gets no more rounds: its calls are not run.
        if (calls.length === 0 || last) break;
        turns.push({ role: 'assistant', content: roundText, toolCalls: calls });
        for (const call of calls) {
          const result = await registry.run(call).catch((err: Error) => `The tool failed: ${err.message}`);
          turns.push({ role: 'tool', toolCallId: call.id, name: call.name, content: result });
        }
      }
      if (!text) throw new ProviderError('provider_bad_response', 'The model gave no answer, only tool calls or nothing at all. Try again, or another model.');
    } catch (err) {
      error = describeFailure(err, signal);
      // Whatever arrived before a failure or Stop is kept; an empty reply is an error to retry.
      status = text ? 'partial' : error.code === 'cancelled' ? 'partial' : 'error';
      if (error.code !== 'cancelled') log('warn', `reply failed in ${conversationId}: ${error.code}: ${error.message}`);
    }
    await saving;
    let finished: Message;
    try {
      finished = await conversations.finish(placeholder.id, { content: text, status, error, model });
      await conversations.setShown(placeholder.id, [...shown]);
      if (text) await this.citeQuietly(placeholder.id, text, [...shown]);
    } catch (err) {
      log('error', `could not store the finished reply: ${(err as Error).message}`);
      finished = { ...placeholder, content: text, status: 'partial', error };
    }
    events.emit('chat.finished', { conversationId, message: finished });
    events.emit('conversations.changed', { conversationId });
    this.tellDaytime((d) => d.touched(conversationId));
  }

  /** Daytime memory hears of the turn; whatever it does, the turn is not its to fail. */
  private tellDaytime(tell: (daytime: DaytimeMemory) => void): void {
    if (!this.deps.daytime) return;
    try {
      tell(this.deps.daytime);
    } catch (err) {
      this.deps.log('error', `daytime memory failed: ${(err as Error).message}`);
    }
  }

  /**
   * When the history fills most of its room, the oldest turns are about to be dropped: unless the
   * rolling summary already covers them, the nap is asked to note and summarise everything beyond the
   * newest half. Runs beside the turn (two small reads), never in its way.
   */
  private async noteOverflow(
    conversationId: string,
    stored: readonly Message[],
    history: readonly ChatTurn[],
    system: string,
    room: number,
    readSummary: () => Promise<RollingSummary | null>,
    charsPerToken?: number,
  ): Promise<void> {
    if (!this.deps.daytime) return;
    const budget = historyBudget(system, room, { charsPerToken });
    const leaving = turnsBeyond(history, budget * OVERFLOW_AT, charsPerToken);
    if (leaving === 0) return;
    const through = stored[Math.max(leaving, turnsBeyond(history, budget * SUMMARISE_BEYOND, charsPerToken)) - 1]!;
    const [summary, leavingSeq] = await Promise.all([readSummary(), this.deps.conversations.seqOf(stored[leaving - 1]!.id)]);
    if (summary && leavingSeq !== null && summary.throughSeq >= leavingSeq) return;
    this.tellDaytime((d) => d.overflow(conversationId, through.id));
  }

  private async resolveChatProvider() {
    const settings = await this.deps.settings.get();
    const id = settings.chatProviderId;
    if (!id) throw new ApiError('no_provider', 'No model is connected yet. Connect one in Settings → Models.');
    try {
      return await this.deps.providers.resolve(id);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'not_found') {
        throw new ApiError('no_provider', 'The model connection chosen for chat was removed. Choose another in Settings → Models.');
      }
      throw err;
    }
  }

  /**
   * The system prompt, the history that fits, and passive recall placed just before the person's
   * latest message. The prompt is the conversation's snapshot while it says what it would say now —
   * the same self, sleep day, time zone and resident memory — and is rebuilt the moment one changes,
   * so a memory forgotten, pinned or edited mid-conversation reaches the very next request, while an
   * unchanged prompt stays byte for byte the same (providers cache its prefix).
   */
  private async buildTurns(
    conversationId: string,
    placeholderId: string,
    contextTokens: number,
    charsPerToken?: number,
    note?: string,
    /** Continuing a reply: its words so far, the last turn (the model's own, unfinished). */
    prefix?: string,
    /** A model that sees: its pictures' family, so the fit counts the images readImages will send. */
    family?: ImageFamily,
  ): Promise<{ turns: ChatTurn[]; context: TurnContext }> {
    const { conversations, settings, selfLayer, now } = this.deps;
    const s = await settings.get();
    const at = now();
    const day = sleepDay(at, s.sleepTime, s.timeZone);
    const conversation = await conversations.get(conversationId);
    let system = conversation.systemPrompt;
    const builtAt = await conversations.promptBuiltAt(conversationId);
    const [selfBlocks, memory] = await Promise.all([selfLayer.list(), this.memory.promptSections()]);
    const prompt = (when: Date) => buildSystemPrompt({ selfBlocks, sleepDay: day, timeZone: s.timeZone, now: when, extraSections: memory.sections });
    // Built as at the snapshot's own time, so only a change of what it carries (not the clock) differs.
    if (!system || conversation.systemPromptDay !== day || !builtAt || prompt(builtAt) !== system) {
      system = prompt(at);
      await conversations.saveSystemPrompt(conversationId, system, day);
    }
    const stored = (await conversations.messages(conversationId)).filter(
      (m) => m.id !== placeholderId && m.status !== 'error' && m.status !== 'streaming' && (m.content.trim() !== '' || m.images?.length),
    );
    const lastUser = stored.findLast((m) => m.role === 'user');
    if (!lastUser && note === undefined) throw new ApiError('conflict', 'There is nothing to answer yet.');
    const context: TurnContext = {
      conversationId,
      userMessageId: lastUser?.id ?? placeholderId,
      // Speaking first, the note is what recall looks for, and nothing is saved: no words of the person's are its source.
      userText: note ?? lastUser!.content,
      residentIds: memory.residentIds,
      offRecord: conversation.offRecord === true || note !== undefined,
    };
    const history: ChatTurn[] = stored.map((m) => withImages(m.role, m.content, m.images));
    if (note !== undefined) history.push({ role: 'user', content: note });
    // (A trailing assistant turn is the model's own words to go on from; servers refuse trailing whitespace there.)
    if (prefix !== undefined) history.push({ role: 'assistant', content: prefix.trimEnd() });
    // Continuing, the recall of the turn that started the reply stays in its words; none is added at its end.
    const passive =
      prefix !== undefined
        ? null
        : await this.memory.passive(context, placeholderId).catch((err: Error) => {
            this.deps.log('warn', `passive recall skipped: ${err.message}`);
            return null;
          });
    // Room for the passive block is reserved before trimming history, so it never pushes out the
    // person's own message.
    const reserve = passive ? estimateTokens(passive.content, charsPerToken) + 8 : 0;
    const room = contextTokens - reserve;
    const images: FitOptions['images'] = family && {
      max: MAX_IMAGES_SENT,
      tokens: (turn) => imagesOf.get(turn)?.images.map((image) => imageTokens(family, image.width, image.height)),
    };
    let fit = fitToContext(system, history, room, { charsPerToken, images });
    // Read at most once a turn, by whichever of the fit and the overflow check needs it first.
    let summaryRead: Promise<RollingSummary | null> | undefined;
    const readSummary = () => (summaryRead ??= conversations.rollingSummary(conversationId));
    // Older turns left out: the rolling summary of them follows the system prompt (which stays byte
    // for byte the same, for the providers' prompt caches), so what was said at the start is not lost.
    if (fit.dropped > 0) {
      const summary = await readSummary().catch((err: Error) => {
        this.deps.log('warn', `rolling summary unread: ${err.message}`);
        return null;
      });
      if (summary) fit = fitToContext(`${system}\n\n${EARLIER_HEADING}\n${summary.text}`, history, room, { charsPerToken, images });
    }
    void this.noteOverflow(conversationId, stored, history, system, room, readSummary, charsPerToken).catch((err: Error) =>
      this.deps.log('warn', `overflow nap not asked: ${err.message}`),
    );
    const fitted = fit.messages;
    if (passive) fitted.splice(fitted.length - 1, 0, passive);
    // Passive recall before the first message of a conversation would lead the list: it joins the system turn.
    return { turns: userFirst(fitted), context };
  }
}

/** Images read into one request at most (the newest); older ones stay notes. */
const MAX_IMAGES_SENT = 8;

/** A person's turn with images: its words carry the note, and the images wait here for readImages. */
const imagesOf = new WeakMap<ChatTurn, { caption: string; images: ImageRef[] }>();

function withImages(role: Message['role'], content: string, images: ImageRef[] | undefined): ChatTurn {
  if (role !== 'user' || !images?.length) return { role, content };
  const turn: ChatTurn = { role, content: photoNote(images.length, content) };
  imagesOf.set(turn, { caption: content, images });
  return turn;
}

function describeFailure(err: unknown, signal: AbortSignal): ApiErrorShape {
  if (signal.aborted) return { code: 'cancelled', message: 'You stopped this reply.' };
  if (err instanceof ProviderError) return { code: err.code, message: err.message };
  if (err instanceof ApiError) return { code: err.code, message: err.message };
  // The person's one message is too long (not the conversation): `field` says so, for the heading.
  if (err instanceof ContextOverflowError) return { code: 'provider_context_overflow', message: err.message, field: 'content' };
  return { code: 'internal', message: 'Something went wrong while I was answering. The details are in the log.' };
}

/**
 * The memories a request puts before the model: the markers in its system prompt (resident memory),
 * the passive recall block and the tool results — not the conversation's own earlier messages, whose
 * markers are citations, not the memories themselves.
 */
function memoriesShown(turns: readonly ChatTurn[]): number[] {
  const ids = new Set<number>();
  for (const turn of turns) {
    if (turn.role === 'system' || turn.role === 'tool' || (turn.role === 'assistant' && turn.name === PASSIVE_MESSAGE_NAME)) {
      for (const id of parseCitations(turn.content)) ids.add(id);
    }
  }
  return [...ids];
}
