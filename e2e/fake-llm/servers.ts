// The fake model server's answers to the endpoints where other local servers say how large a
// context they really give (their OpenAI-compatible chat is the server's own):
//   llama.cpp  GET /props         default_generation_settings.n_ctx (the context of one slot), total_slots…
//                                 (tools/server/README.md, "GET /props")
//   LM Studio  GET /api/v0/models data[]: id, state, max_context_length, and loaded_context_length for a
//                                 loaded model (docs 1_developer/2_rest/endpoints.md; the loaded length as
//                                 LM Studio's clients read it)
//              GET /api/v1/models models[]: key, loaded_instances[].config.context_length, max_context_length
//                                 (docs 1_developer/2_rest/list.md)
//   vLLM       GET /v1/models     data[]: the OpenAI model card plus max_model_len
//                                 (vllm/entrypoints/openai/protocol.py ModelCard)
import type http from 'node:http';
import type { FakeLlm } from './server.js';

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

export interface FakeLlamaCpp {
  /** The context of one slot: -c divided among --parallel slots. */
  nCtx: number;
  totalSlots: number;
}

/** Makes `fake` answer /props as llama-server does. */
export function serveLlamaCpp(fake: FakeLlm, init: Partial<FakeLlamaCpp> = {}): FakeLlamaCpp {
  const state: FakeLlamaCpp = { nCtx: init.nCtx ?? 4096, totalSlots: init.totalSlots ?? 1 };
  fake.route('GET /props', (_body, res) =>
    json(res, 200, {
      default_generation_settings: {
        id: 0,
        id_task: -1,
        n_ctx: state.nCtx,
        speculative: false,
        is_processing: false,
        params: { n_predict: -1, seed: 4294967295, temperature: 0.8, top_k: 40, top_p: 0.95, min_p: 0.05, max_tokens: -1, stream: true },
        prompt: '',
        next_token: { has_next_token: true, has_new_line: false, n_remain: -1, n_decoded: 0, stopping_word: '' },
      },
      total_slots: state.totalSlots,
      model_path: `../models/${fake.models[0] ?? 'model'}.gguf`,
      chat_template: '...',
      chat_template_caps: {},
      modalities: { vision: false },
      build_info: 'b6522-be79d9fdd',
      is_sleeping: false,
    }),
  );
  return state;
}

export interface FakeLmStudioModel {
  id: string;
  state: 'loaded' | 'not-loaded';
  maxContextLength: number;
  /** Present for a loaded model. */
  loadedContextLength?: number;
}

/** Makes `fake` list its models as LM Studio's REST API does (v0 and v1). */
export function serveLmStudio(fake: FakeLlm, models: FakeLmStudioModel[]): { models: FakeLmStudioModel[] } {
  const state = { models };
  fake.route('GET /api/v0/models', (_body, res) =>
    json(res, 200, {
      object: 'list',
      data: state.models.map((m) => ({
        id: m.id,
        object: 'model',
        type: 'llm',
        publisher: 'lmstudio-community',
        arch: 'llama',
        compatibility_type: 'gguf',
        quantization: 'Q4_K_M',
        state: m.state,
        max_context_length: m.maxContextLength,
        ...(m.state === 'loaded' && m.loadedContextLength ? { loaded_context_length: m.loadedContextLength } : {}),
      })),
    }),
  );
  fake.route('GET /api/v1/models', (_body, res) =>
    json(res, 200, {
      models: state.models.map((m) => ({
        type: 'llm',
        publisher: 'lmstudio-community',
        key: m.id,
        display_name: m.id,
        architecture: 'llama',
        quantization: { name: 'Q4_K_M', bits_per_weight: 4 },
        size_bytes: 241_410_208,
        params_string: '8B',
        loaded_instances: m.state === 'loaded' && m.loadedContextLength ? [{ id: m.id, config: { context_length: m.loadedContextLength } }] : [],
        max_context_length: m.maxContextLength,
        format: 'gguf',
        capabilities: { vision: false, trained_for_tool_use: true },
        description: null,
      })),
    }),
  );
  return state;
}

export interface FakeVllm {
  maxModelLen: number;
}

/** Makes `fake` list its models as vLLM's OpenAI server does, with max_model_len. */
export function serveVllm(fake: FakeLlm, init: Partial<FakeVllm> = {}): FakeVllm {
  const state: FakeVllm = { maxModelLen: init.maxModelLen ?? 4096 };
  fake.route('GET /v1/models', (_body, res) =>
    json(res, 200, {
      object: 'list',
      data: fake.models.map((id) => ({
        id,
        object: 'model',
        created: 1_727_346_168,
        owned_by: 'vllm',
        root: id,
        parent: null,
        max_model_len: state.maxModelLen,
        permission: [
          {
            id: 'modelperm-fake',
            object: 'model_permission',
            created: 1_727_346_168,
            allow_create_engine: false,
            allow_sampling: true,
            allow_logprobs: true,
            allow_search_indices: false,
            allow_view: true,
            allow_fine_tuning: false,
            organization: '*',
            group: null,
            is_blocking: false,
          },
        ],
      })),
    }),
  );
  return state;
}
