// The on-device models Anima offers to download: transformers.js ONNX repositories on the Hugging
// Face hub (or a mirror with the same paths). Each entry names exactly the files the runtime reads,
// so a download fetches hundreds of megabytes instead of every variant in the repository (several
// gigabytes). Plain data and no Node imports, so any side can read it.

export type ModelTask = 'embedding' | 'chat';

/**
 * The transformers.js `dtype` that selects the chosen weight file (`q8` → `onnx/model_quantized.onnx`,
 * `q4` → `onnx/model_q4.onnx`, `fp32` → `onnx/model.onnx`); the loader must pass it or the runtime
 * looks for a file that was never downloaded.
 */
export type ModelDtype = 'fp32' | 'q8' | 'q4';

interface CatalogEntryBase {
  /** Hugging Face repository id, always `org/name`; also the folder under `<dataDir>/models/`. */
  readonly id: string;
  readonly task: ModelTask;
  readonly name: string;
  /** What the listed files weigh, roughly; the host's listing gives the exact numbers at download time. */
  readonly approxBytes: number;
  /** BCP 47 primary tags the model handles well. */
  readonly languages: readonly string[];
  readonly licence: string;
  readonly goodFor: string;
  /** Fetched and verified; a file the host does not have fails the download. Exactly one `.onnx`. */
  readonly files: readonly string[];
  /** Fetched when the host lists them; the runtime reads them if present. */
  readonly optionalFiles: readonly string[];
  readonly dtype: ModelDtype;
  /** Why this weight variant and not the others in the repository. */
  readonly variantReason: string;
  /** Only offered with ANIMA_TEST_MODELS=1 (tests and e2e runs against the fake model host). */
  readonly testOnly?: boolean;
}

export interface EmbeddingCatalogEntry extends CatalogEntryBase {
  readonly task: 'embedding';
  readonly dimensions: number;
  /** Prepended to a search query before embedding ('' when the model wants none). */
  readonly queryPrefix: string;
  /** Prepended to a stored text (a memory, a message) before embedding. */
  readonly passagePrefix: string;
}

export interface ChatCatalogEntry extends CatalogEntryBase {
  readonly task: 'chat';
  /** Tokens the model was trained to attend over (prompt + reply). */
  readonly contextLength: number;
}

export type CatalogEntry = EmbeddingCatalogEntry | ChatCatalogEntry;

export type ModelErrorCode =
  | 'model_not_found' // not in the catalogue, not on the host, or a listed file is missing there
  | 'not_installed' // checkModel on a model that was never (completely) installed
  | 'disk_full'
  | 'integrity' // wrong size or hash: the file was discarded
  | 'network'
  | 'cancelled'
  | 'invalid_id' // not a plain `org/name`
  | 'busy' // a download of the same model is already running, or deleting one that is
  | 'io'; // the disk refused a write or a rename for another reason

/** Shared by the catalogue and the downloader; lives here so the catalogue needs no Node imports. */
export class ModelError extends Error {
  constructor(
    readonly code: ModelErrorCode,
    message: string,
    /** The file the error is about, when there is one (path inside the repository). */
    readonly file?: string,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

const MB = 1_000_000;

const CHAT_OPTIONAL = ['generation_config.json'] as const;

export const MODEL_CATALOG: readonly CatalogEntry[] = [
  {
    id: 'Xenova/multilingual-e5-small',
    task: 'embedding',
    name: 'Multilingual E5 small',
    approxBytes: 136 * MB,
    languages: ['en', 'zh', 'ja', 'ko', 'de', 'fr', 'es', 'ru', 'pt', 'it', 'ar', 'hi'],
    licence: 'MIT',
    goodFor: 'Finding memories by meaning in English, Chinese and about a hundred other languages, on any computer.',
    files: ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_quantized.onnx'],
    optionalFiles: [],
    dtype: 'q8',
    variantReason:
      'int8 weights are a quarter of fp32 (118 MB instead of 470 MB) and run fast on any CPU; for ' +
      'retrieval the ranking barely moves. fp16 is slower on CPUs without native half precision.',
    dimensions: 384,
    queryPrefix: 'query: ',
    passagePrefix: 'passage: ',
  },
  {
    id: 'onnx-community/Qwen2.5-0.5B-Instruct',
    task: 'chat',
    name: 'Qwen2.5 0.5B Instruct',
    approxBytes: 520 * MB,
    languages: ['zh', 'en', 'fr', 'es', 'pt', 'de', 'it', 'ru', 'ja', 'ko', 'vi', 'th', 'ar'],
    licence: 'Apache-2.0',
    goodFor: 'Short replies and background chores (titles, summaries) offline, in Chinese or English, on modest hardware.',
    files: ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_quantized.onnx'],
    optionalFiles: CHAT_OPTIONAL,
    dtype: 'q8',
    variantReason:
      'int8 (512 MB) is a single file without external data and uses CPU kernels every onnxruntime ' +
      'build has; q4 is larger here (786 MB: its embedding table stays fp32) and q4f16 needs fp16 ' +
      'support the CPU path lacks.',
    contextLength: 32_768,
  },
  {
    id: 'HuggingFaceTB/SmolLM2-360M-Instruct',
    task: 'chat',
    name: 'SmolLM2 360M Instruct',
    approxBytes: 421 * MB,
    languages: ['en'],
    licence: 'Apache-2.0',
    goodFor: 'The lightest English chat model: quick answers on older laptops, not for Chinese.',
    files: ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_q4.onnx'],
    optionalFiles: CHAT_OPTIONAL,
    dtype: 'q4',
    variantReason:
      'The repository offers fp32, fp16, q4 and q4f16; q4 (417 MB) is the smallest that runs on the ' +
      'CPU (4-bit MatMulNBits) without fp16, in one file without external data.',
    contextLength: 8_192,
  },
  {
    id: 'onnx-community/Qwen2.5-1.5B-Instruct',
    task: 'chat',
    name: 'Qwen2.5 1.5B Instruct',
    approxBytes: 1_590 * MB,
    languages: ['zh', 'en', 'fr', 'es', 'pt', 'de', 'it', 'ru', 'ja', 'ko', 'vi', 'th', 'ar'],
    licence: 'Apache-2.0',
    goodFor: 'Noticeably better conversation than the 0.5B model, for computers with 8 GB of memory or more.',
    files: ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_quantized.onnx'],
    optionalFiles: CHAT_OPTIONAL,
    dtype: 'q8',
    variantReason:
      'int8 (1.58 GB) is one file; fp32 and fp16 need multi-gigabyte external data files, q4 is ' +
      'larger (1.79 GB) and q4f16 needs fp16 support the CPU path lacks.',
    contextLength: 32_768,
  },
];

export const TEST_MODEL_ID = 'anima-test/tiny-bert';
export const TEST_CHAT_MODEL_ID = 'anima-test/tiny-chat';

/** The repository's generated test models (electron/models/testing/models/); never offered to people. */
const TEST_MODELS: readonly CatalogEntry[] = [
  {
    id: TEST_MODEL_ID,
    task: 'embedding',
    name: 'Tiny BERT (test)',
    approxBytes: 1 * MB,
    languages: ['en'],
    licence: 'MIT',
    goodFor: 'Tests only: random weights, meaningless vectors.',
    files: ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx'],
    optionalFiles: [],
    dtype: 'fp32',
    variantReason: 'The test model is generated with fp32 weights only.',
    dimensions: 32,
    queryPrefix: '',
    passagePrefix: '',
    testOnly: true,
  },
  {
    id: TEST_CHAT_MODEL_ID,
    task: 'chat',
    name: 'Tiny chat (test)',
    approxBytes: 1 * MB,
    languages: ['en'],
    licence: 'MIT',
    goodFor: 'Tests only: random weights, meaningless text.',
    files: ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx'],
    optionalFiles: CHAT_OPTIONAL,
    dtype: 'fp32',
    variantReason: 'The test model is generated with fp32 weights only.',
    contextLength: 2_048,
    testOnly: true,
  },
];

export interface CatalogOptions {
  /** Include test-only models; defaults to whether ANIMA_TEST_MODELS=1 is set. */
  includeTestModels?: boolean;
}

export function testModelsEnabled(env: Record<string, string | undefined> | undefined = globalThis.process?.env): boolean {
  return env?.ANIMA_TEST_MODELS === '1';
}

export function catalogModels(options: CatalogOptions = {}): CatalogEntry[] {
  const withTests = options.includeTestModels ?? testModelsEnabled();
  return withTests ? [...MODEL_CATALOG, ...TEST_MODELS] : [...MODEL_CATALOG];
}

/** The catalogue entry for `id`; anything else is refused, so only known file sets are ever downloaded. */
export function catalogEntry(id: string, options: CatalogOptions = {}): CatalogEntry {
  const found = catalogModels(options).find((entry) => entry.id === id);
  if (!found) {
    const known = catalogModels(options)
      .map((entry) => entry.id)
      .join(', ');
    throw new ModelError('model_not_found', `"${id}" is not a model Anima offers. Known models: ${known}.`);
  }
  return found;
}
