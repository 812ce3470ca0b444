// The JSON Schema a background answer is asked for, generated from the task's zod schema (the one its
// answer is validated by), in the subset every server understands. What the model writes is what zod
// parses, so the schema is zod's *input* side (`io: 'input'`): a field with a default may be left out.
//
// OpenAI's strict mode (platform.openai.com/docs/guides/structured-outputs, "Supported schemas") takes
// only: a root object (not anyOf); every property listed in `required` (an optional one is emulated
// as a union with null); `additionalProperties: false` on every object; anyOf but not allOf, not,
// if/then/else, dependentRequired/dependentSchemas; for strings only `pattern` and `format` (date-time,
// time, date, duration, email, hostname, ipv4, ipv6, uuid); for numbers multipleOf, minimum, maximum
// and the exclusive bounds; for arrays minItems, maxItems; at most 5 levels of nesting. So:
// - every object gets `additionalProperties: false` (zod drops unknown keys anyway; servers that
//   constrain decoding stop spending tokens on them);
// - a property zod does not require becomes required when that loses nothing: it accepts null (the
//   model says null), or it has a default (the model writes a value of its type: `"entities": []`).
//   Otherwise (an optional field that refuses null) the schema cannot be strict and is sent with
//   `strict: false` as it is: OpenAI then takes it as a hint, and llama.cpp, vLLM and LM Studio
//   constrain to it regardless of the flag;
// - a discriminated union's `oneOf` becomes `anyOf` (its branches exclude each other: the same);
// - keywords outside the subset are dropped: minLength/maxLength (llama.cpp would also unroll a
//   4,000-character bound into thousands of grammar rules), default, $schema, unknown formats, and
//   zod's safe-integer bounds, which constrain nothing. zod still checks all of them on the answer.
// Anything else outside the subset (allOf, records' additionalProperties schemas, tuples, an empty
// schema for an unrepresentable type, a root that is not an object, deeper nesting) makes it non-strict.
import { z } from 'zod';

export interface AnswerSchema {
  /** The task's name as servers accept it (OpenAI and Anthropic: letters, digits, `_`, `-`, at most 64). */
  name: string;
  schema: Record<string, unknown>;
  /** True when the schema follows OpenAI's strict-mode rules above. */
  strict: boolean;
}

type Node = Record<string, unknown>;

const OPENAI_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
const DROPPED = new Set(['$schema', 'minLength', 'maxLength', 'default', '$id']);
const NOT_STRICT = new Set([
  'allOf',
  'not',
  'if',
  'then',
  'else',
  'dependentRequired',
  'dependentSchemas',
  'patternProperties',
  'prefixItems',
  'propertyNames',
]);
/** Object levels OpenAI allows. */
const MAX_DEPTH = 5;

const cache = new WeakMap<z.ZodType, { schema: Node; strict: boolean }>();

/** The JSON Schema for a task's answer; generated once per zod schema. */
export function answerSchema(purpose: string, schema: z.ZodType): AnswerSchema {
  let built = cache.get(schema);
  if (!built) {
    const state = { strict: true };
    const raw = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Node;
    const converted = convert(raw, state, 0);
    if (converted.type !== 'object' || !isNode(converted.properties)) state.strict = false;
    built = { schema: converted, strict: state.strict };
    cache.set(schema, built);
  }
  return { name: schemaName(purpose), schema: built.schema, strict: built.strict };
}

/** "deep-sleep:contradictions" → "deep-sleep_contradictions". */
export function schemaName(purpose: string): string {
  return purpose.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'answer';
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function acceptsNull(node: unknown): boolean {
  if (!isNode(node)) return false;
  if (node.type === 'null' || (Array.isArray(node.type) && node.type.includes('null'))) return true;
  if (node.const === null || (Array.isArray(node.enum) && node.enum.includes(null))) return true;
  return [node.anyOf, node.oneOf].some((list) => Array.isArray(list) && list.some(acceptsNull));
}

function convert(node: Node, state: { strict: boolean }, depth: number): Node {
  const out: Node = {};
  // Every schema names its type (or its branches, or a constant): `{}` is "anything", which strict mode refuses.
  if (!('type' in node) && !('anyOf' in node) && !('oneOf' in node) && !('const' in node) && !('enum' in node) && !('$ref' in node)) state.strict = false;
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED.has(key)) continue;
    if (NOT_STRICT.has(key)) state.strict = false;
    if (key === 'format' && !OPENAI_FORMATS.has(String(value))) continue;
    if (key === 'maximum' && value === Number.MAX_SAFE_INTEGER) continue;
    if (key === 'minimum' && value === Number.MIN_SAFE_INTEGER) continue;
    if ((key === 'anyOf' || key === 'oneOf') && Array.isArray(value)) {
      out.anyOf = value.map((branch) => (isNode(branch) ? convert(branch, state, depth) : branch));
    } else if (key === 'items' && isNode(value)) {
      out.items = convert(value, state, depth);
    } else if (key === 'properties' && isNode(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isNode(v) ? convert(v, state, depth + 1) : v]));
    } else if (key === 'additionalProperties' && isNode(value)) {
      // A record: keys of the model's choosing, which strict mode cannot express.
      state.strict = false;
      out.additionalProperties = convert(value, state, depth + 1);
    } else if (key !== 'required') {
      out[key] = value;
    }
  }
  if (isNode(node.properties)) {
    if (depth + 1 > MAX_DEPTH) state.strict = false;
    const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
    for (const [k, v] of Object.entries(node.properties)) {
      if (required.has(k)) continue;
      // Required loses nothing when the model can say null, or when a default's type is the answer.
      if (acceptsNull(v) || (isNode(v) && 'default' in v)) required.add(k);
      else state.strict = false;
    }
    // In the properties' order, which is the order the model writes them in.
    out.required = Object.keys(node.properties).filter((k) => required.has(k));
    if (!('additionalProperties' in out)) out.additionalProperties = false;
  }
  return out;
}
