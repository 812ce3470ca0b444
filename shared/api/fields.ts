// Field schemas the inputs of more than one domain use. For the files under shared/api/ only: the
// barrel (shared/api.ts) does not export them.
import { z } from 'zod';

export const id = z.string().min(1).max(64);
export const empty = z.object({}).strict();
export const isoDate = z.string().refine((v) => !Number.isNaN(Date.parse(v)), 'expected a date (ISO 8601)');

/** A catalogue model id: `org/name` as the Hugging Face hub spells them. */
export const localModelId = z.string().regex(/^[A-Za-z0-9][\w.-]{0,95}\/[A-Za-z0-9][\w.-]{0,95}$/, 'expected a model id like org/name');
