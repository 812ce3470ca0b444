// The JSON Schema a background answer is asked for: OpenAI's strict-mode rules where they lose
// nothing, every task's schema strict, the judging answers' reason before the verdict.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { answerSchema, schemaName } from './answer-schema.js';
import { contradictionAnswer, dreamAnswer, lightSleepAnswer, mergeAnswer, napAnswer, profileAnswer, splitAnswer } from './schemas.js';

type Node = Record<string, unknown>;
const walk = (node: unknown, visit: (n: Node) => void): void => {
  if (Array.isArray(node)) node.forEach((n) => walk(n, visit));
  else if (node && typeof node === 'object') {
    visit(node as Node);
    Object.values(node).forEach((n) => walk(n, visit));
  }
};

describe('answer schemas', () => {
  const tasks = { lightSleepAnswer, napAnswer, contradictionAnswer, splitAnswer, mergeAnswer, profileAnswer, dreamAnswer };

  it('every task asks in strict mode: each object closed, every property required, only keywords strict mode takes', () => {
    for (const [name, schema] of Object.entries(tasks)) {
      const a = answerSchema(name, schema);
      expect(a.strict, name).toBe(true);
      expect(a.schema.type).toBe('object');
      walk(a.schema, (n) => {
        for (const key of ['minLength', 'maxLength', 'default', '$schema', 'oneOf', 'allOf']) expect(n, `${name} ${key}`).not.toHaveProperty(key);
        if (n.type === 'object') {
          expect(n.additionalProperties).toBe(false);
          expect(n.required).toEqual(Object.keys(n.properties as Node));
        }
        if (n.maximum !== undefined) expect(n.maximum).not.toBe(Number.MAX_SAFE_INTEGER);
      });
    }
  });

  it("an answer held to the schema parses: null for what may be left out, the default's type for a default", () => {
    const memory = { type: 'world', content: 'Mara lives in Lisbon.', entities: [], sources: ['m1'], validFrom: null, validTo: null, relations: [null] };
    const parsed = lightSleepAnswer.parse({ memories: [memory], anchors: [], imprints: [], narratives: [] });
    expect(parsed.memories[0]!.relations).toEqual([null]);
    expect(napAnswer.parse({ memories: [], summary: null }).summary).toBeUndefined();
    expect(napAnswer.parse({ memories: [], summary: '## Mara  moved' }).summary).toBe('Mara moved');
  });

  it('judging answers put the reason before the verdict (the order the model writes them in)', () => {
    const itemOf = (schema: z.ZodType, key: string) => ((answerSchema('x', schema).schema.properties as Node)[key] as Node).items as Node;
    for (const branch of itemOf(contradictionAnswer, 'operations').anyOf as Node[]) expect(Object.keys(branch.properties as Node)[0]).toBe('reason');
    expect(Object.keys(itemOf(splitAnswer, 'splits').properties as Node)).toEqual(['reason', 'id', 'parts']);
    expect(Object.keys(itemOf(mergeAnswer, 'merges').properties as Node)).toEqual(['reason', 'ids', 'type', 'content']);
  });

  it('is not strict when strict mode would lose something, and is then sent as it is', () => {
    const optional = answerSchema('t', z.object({ a: z.string(), b: z.string().optional() }));
    expect(optional.strict).toBe(false);
    expect(optional.schema.required).toEqual(['a']);
    expect(optional.schema.additionalProperties).toBe(false);
    expect(answerSchema('t', z.object({ tags: z.record(z.string(), z.number()) })).strict).toBe(false);
    expect(answerSchema('t', z.object({ any: z.unknown() })).strict).toBe(false);
    expect(answerSchema('t', z.union([z.object({ a: z.string() }), z.object({ b: z.string() })])).strict).toBe(false);
    const deep = z.object({ a: z.object({ b: z.object({ c: z.object({ d: z.object({ e: z.object({ f: z.string() }) }) }) }) }) });
    expect(answerSchema('t', deep).strict).toBe(false);
    expect(answerSchema('t', z.object({ when: z.iso.datetime(), mail: z.email() })).schema.properties).toMatchObject({
      when: { format: 'date-time' },
      mail: { format: 'email' },
    });
  });

  it('names the schema as servers accept it', () => {
    expect(schemaName('deep-sleep:contradictions')).toBe('deep-sleep_contradictions');
    expect(schemaName('light-sleep')).toBe('light-sleep');
    expect(schemaName('')).toBe('answer');
  });
});
