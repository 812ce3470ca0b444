import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, type LocalModel, type ModelDownloadProgress, type Settings } from '../../shared/api.js';
import { setClient } from '../api/index.js';
import { scriptedClient, type ScriptedClient } from '../api/scripted-client.js';
import { useApp } from './app.js';
import { applyProgress, formatBytes, languageNames, percentDone, resetModelsStore, searchModel, timeLeft, useModels } from './models.js';

function model(over: Partial<LocalModel> = {}): LocalModel {
  return {
    id: 'anima-test/tiny-bert',
    task: 'embedding',
    name: 'Tiny BERT (test)',
    approxBytes: 1_000_000,
    languages: ['en'],
    licence: 'MIT',
    goodFor: 'Tests only.',
    testOnly: true,
    dimensions: 32,
    contextLength: null,
    state: 'available',
    installed: null,
    partialBytes: 0,
    progress: null,
    error: null,
    usedBy: { embeddings: false, providers: [] },
    ...over,
  };
}

function progress(over: Partial<ModelDownloadProgress> = {}): ModelDownloadProgress {
  return {
    id: 'anima-test/tiny-bert',
    phase: 'downloading',
    fileIndex: 3,
    fileCount: 4,
    bytesDone: 50_000,
    bytesTotal: 150_000,
    bytesPerSecond: 40_000,
    secondsLeft: 2.5,
    ...over,
  };
}

let handlers: ScriptedClient['handlers'];
let emit: ScriptedClient['emit'];

beforeEach(() => {
  const scripted = scriptedClient();
  ({ handlers, emit } = scripted);
  resetModelsStore();
  setClient(scripted.client);
});
afterEach(() => {
  resetModelsStore();
  setClient(null);
});

describe('pure helpers', () => {
  it('applies progress only to a model that is downloading (or being started)', () => {
    const items = [model({ state: 'downloading' }), model({ id: 'x/other' })];
    const next = applyProgress(items, progress());
    expect(next[0]!.progress?.bytesDone).toBe(50_000);
    expect(next[1]).toBe(items[1]);
    const idle = [model()];
    expect(applyProgress(idle, progress())).toBe(idle);
    expect(applyProgress(idle, progress(), true)[0]!.state).toBe('downloading');
  });

  it('says percent, sizes, speed and time left in numbers people read', () => {
    expect(percentDone(progress())).toBe(33);
    expect(percentDone({ bytesDone: 149_999, bytesTotal: 150_000 })).toBe(99);
    expect(percentDone({ bytesDone: 5, bytesTotal: 0 })).toBe(0);
    expect(percentDone(null)).toBe(0);
    expect(formatBytes(950, 'en')).toBe('950 B');
    expect(formatBytes(183_000, 'en')).toBe('183 kB');
    expect(formatBytes(2_400_000, 'en')).toBe('2.4 MB');
    expect(formatBytes(136_000_000, 'en')).toBe('136 MB');
    expect(formatBytes(1_590_000_000, 'en')).toBe('1.6 GB');
    expect(timeLeft(null)).toEqual({ key: 'estimating', count: 0 });
    expect(timeLeft(2.2)).toEqual({ key: 'secondsLeft', count: 3 });
    expect(timeLeft(41)).toEqual({ key: 'secondsLeft', count: 45 });
    expect(timeLeft(150)).toEqual({ key: 'minutesLeft', count: 3 });
    expect(timeLeft(7200)).toEqual({ key: 'hoursLeft', count: 2 });
  });

  it('names languages in the person’s language', () => {
    expect(languageNames(['en', 'zh', 'ja', 'ko'], 'en')).toEqual({ list: 'English, Chinese, Japanese', more: 1 });
    expect(languageNames(['en', 'zh'], 'zh-CN')).toEqual({ list: '英语、中文', more: 0 });
  });

  it('finds the model memory search uses, or one ready to be chosen', () => {
    expect(searchModel([model()])).toBeNull();
    const ready = model({ state: 'installed' });
    expect(searchModel([ready])).toEqual({ model: ready, chosen: false });
    const chosen = model({ id: 'x/e5', state: 'installed', usedBy: { embeddings: true, providers: [] } });
    expect(searchModel([ready, chosen])).toEqual({ model: chosen, chosen: true });
  });
});

describe('the models store', () => {
  it('loads the list, follows a download through its events, and notes when it finished', async () => {
    handlers['models.list'] = () => [model()];
    await useModels.getState().refresh();
    expect(useModels.getState().items).toHaveLength(1);

    handlers['models.download'] = () => {
      // The first progress event can arrive before the call's answer.
      emit('models.progress', progress({ phase: 'checking', bytesDone: 0 }));
      return model({ state: 'downloading' });
    };
    const started = useModels.getState().download('anima-test/tiny-bert');
    expect(useModels.getState().pending['anima-test/tiny-bert']).toBe('download');
    await started;
    expect(useModels.getState().pending).toEqual({});
    expect(useModels.getState().items[0]).toMatchObject({ state: 'downloading', progress: { phase: 'checking' } });

    emit('models.progress', progress());
    expect(useModels.getState().items[0]!.progress?.bytesDone).toBe(50_000);

    const installed = model({ state: 'installed', installed: { bytesOnDisk: 150_000, installedAt: '2025-03-11T10:00:00.000Z', host: 'http://127.0.0.1:1' } });
    emit('models.changed', { id: installed.id, models: [installed] });
    expect(useModels.getState().items[0]!.state).toBe('installed');
    expect(useModels.getState().lastChange).toMatchObject({ id: installed.id, state: 'installed', failed: false });
    // A late progress event does not turn an installed model back into a download.
    emit('models.progress', progress({ bytesDone: 60_000 }));
    expect(useModels.getState().items[0]!.state).toBe('installed');
  });

  it('drops a call’s answer that an event overtook (a download that finished before the call answered)', async () => {
    handlers['models.list'] = () => [model()];
    await useModels.getState().refresh();
    const installed = model({ state: 'installed', installed: { bytesOnDisk: 150_000, installedAt: '2025-03-11T10:00:00.000Z', host: 'http://127.0.0.1:1' } });
    handlers['models.download'] = () => {
      emit('models.changed', { id: installed.id, models: [installed] });
      return model({ state: 'downloading', progress: progress({ phase: 'checking', bytesDone: 0 }) });
    };
    await useModels.getState().download(installed.id);
    expect(useModels.getState().items[0]!.state).toBe('installed');
    // …and a list read while an event arrived is older than the event.
    handlers['models.list'] = () => {
      emit('models.changed', { id: installed.id, models: [installed] });
      return [model()];
    };
    await useModels.getState().refresh();
    expect(useModels.getState().items[0]!.state).toBe('installed');
  });

  it('cancels, deletes and chooses the search model through the host', async () => {
    handlers['models.list'] = () => [model({ state: 'downloading', progress: progress() })];
    await useModels.getState().refresh();
    handlers['models.cancel'] = () => model({ state: 'partial', partialBytes: 50_000 });
    await useModels.getState().cancel('anima-test/tiny-bert');
    expect(useModels.getState().items[0]).toMatchObject({ state: 'partial', partialBytes: 50_000 });

    const settings = { models: { host: 'https://huggingface.co', embedding: 'anima-test/tiny-bert' } } as Settings;
    handlers['models.useForEmbeddings'] = (input) => {
      expect(input).toEqual({ id: 'anima-test/tiny-bert' });
      return settings;
    };
    await useModels.getState().useForEmbeddings('anima-test/tiny-bert');
    expect(useModels.getState().items[0]!.usedBy.embeddings).toBe(true);
    expect(useApp.getState().settings?.models.embedding).toBe('anima-test/tiny-bert');

    handlers['models.delete'] = () => model();
    await useModels.getState().remove('anima-test/tiny-bert');
    expect(useModels.getState().items[0]!.state).toBe('available');
  });

  it('reads where search by meaning stands, follows its event, and shows the list even when the status cannot be read', async () => {
    const ready = { model: 'anima-test/tiny-bert', state: 'ready', done: 0, total: 0, queued: 0, searching: false, error: null } as const;
    handlers['models.list'] = () => [model({ state: 'installed' })];
    handlers['models.embeddingStatus'] = () => ready;
    await useModels.getState().refresh();
    expect(useModels.getState().embeddings).toEqual(ready);
    const reading = { ...ready, state: 'embedding', done: 40, total: 120 } as const;
    emit('embeddings.status', reading);
    expect(useModels.getState().embeddings).toEqual(reading);

    handlers['models.embeddingStatus'] = () => {
      throw new ApiError('internal', 'worker gone');
    };
    handlers['models.list'] = () => [model()];
    await useModels.getState().refresh();
    expect(useModels.getState()).toMatchObject({ loaded: true, error: null, embeddings: reading });
    expect(useModels.getState().items[0]!.state).toBe('available');
  });

  it('keeps the error when the list cannot be read', async () => {
    handlers['models.list'] = () => {
      throw new ApiError('internal', 'disk gone');
    };
    await expect(useModels.getState().refresh()).rejects.toThrow('disk gone');
    expect(useModels.getState()).toMatchObject({ loaded: true });
    expect(useModels.getState().error).toBeInstanceOf(ApiError);
  });
});
