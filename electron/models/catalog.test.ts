import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { catalogEntry, catalogModels, MODEL_CATALOG, ModelError, TEST_CHAT_MODEL_ID, TEST_MODEL_ID, testModelsEnabled, type CatalogEntry } from './catalog.js';
import { isModelId } from './download.js';

// transformers.js picks the weight file from the dtype; a mismatch means loading a file never downloaded.
const DTYPE_SUFFIX = { fp32: '', q8: '_quantized', q4: '_q4' } as const;
const TEST_MODELS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'testing', 'models');

describe('model catalogue', () => {
  const all = catalogModels({ includeTestModels: true });

  it.each(all.map((entry) => [entry.id, entry] as const))('%s is complete and consistent', (_id, entry: CatalogEntry) => {
    expect(isModelId(entry.id)).toBe(true);
    expect(entry.files).toEqual(expect.arrayContaining(['config.json', 'tokenizer.json', 'tokenizer_config.json']));
    const weights = entry.files.filter((file) => file.endsWith('.onnx'));
    expect(weights).toEqual([`onnx/model${DTYPE_SUFFIX[entry.dtype]}.onnx`]);
    expect(new Set([...entry.files, ...entry.optionalFiles]).size).toBe(entry.files.length + entry.optionalFiles.length);
    expect(entry.approxBytes).toBeGreaterThan(0);
    expect(entry.languages.length).toBeGreaterThan(0);
    expect(entry.name && entry.licence && entry.goodFor && entry.variantReason).toBeTruthy();
    if (entry.task === 'embedding') expect(entry.dimensions).toBeGreaterThan(0);
    else expect(entry.contextLength).toBeGreaterThan(0);
  });

  it('offers a multilingual embedding model for English and Chinese and several chat models', () => {
    const embedding = MODEL_CATALOG.filter((e) => e.task === 'embedding');
    expect(embedding.some((e) => e.languages.includes('en') && e.languages.includes('zh'))).toBe(true);
    expect(MODEL_CATALOG.filter((e) => e.task === 'chat').length).toBeGreaterThanOrEqual(2);
    expect(new Set(all.map((e) => e.id)).size).toBe(all.length);
    const e5 = catalogEntry('Xenova/multilingual-e5-small', { includeTestModels: false });
    expect(e5).toMatchObject({ task: 'embedding', dimensions: 384, queryPrefix: 'query: ', passagePrefix: 'passage: ' });
  });

  it('offers the test models only when asked to', () => {
    const ids = (entries: CatalogEntry[]) => entries.map((e) => e.id);
    expect(MODEL_CATALOG.some((e) => e.testOnly)).toBe(false);
    expect(ids(catalogModels({ includeTestModels: false }))).not.toContain(TEST_MODEL_ID);
    expect(ids(catalogModels({ includeTestModels: true }))).toEqual(expect.arrayContaining([TEST_MODEL_ID, TEST_CHAT_MODEL_ID]));
    expect(testModelsEnabled({})).toBe(false);
    expect(testModelsEnabled({ ANIMA_TEST_MODELS: '0' })).toBe(false);
    expect(testModelsEnabled({ ANIMA_TEST_MODELS: '1' })).toBe(true);
    expect(() => catalogEntry(TEST_MODEL_ID, { includeTestModels: false })).toThrow(ModelError);
    expect(catalogEntry(TEST_MODEL_ID, { includeTestModels: true }).task).toBe('embedding');
  });

  it('refuses an unknown id with a clear error', () => {
    let caught: unknown;
    try {
      catalogEntry('someone/unknown-model', { includeTestModels: false });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ModelError);
    expect(caught).toMatchObject({ code: 'model_not_found' });
    expect((caught as Error).message).toContain('someone/unknown-model');
  });

  // The generated test models are another script's output; when present they must match their entries.
  it.each([TEST_MODEL_ID, TEST_CHAT_MODEL_ID])('%s matches the generated files', (id) => {
    const dir = path.join(TEST_MODELS_DIR, ...id.split('/'));
    if (!fs.existsSync(dir)) return;
    const entry = catalogEntry(id, { includeTestModels: true });
    for (const file of entry.files) expect(fs.existsSync(path.join(dir, ...file.split('/'))), file).toBe(true);
    const config = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')) as Record<string, number>;
    if (entry.task === 'embedding') expect(entry.dimensions).toBe(config.hidden_size);
    else expect(entry.contextLength).toBeLessThanOrEqual(config.max_position_embeddings!);
  });
});
