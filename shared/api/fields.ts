// Field schemas the inputs of more than one domain use. For the files under shared/api/ only: the
// barrel (shared/api.ts) does not export them.
import { z } from 'zod';
import { isStorableDate } from '../text.js';

export const id = z.string().min(1).max(64);
export const empty = z.object({}).strict();
/** A real date or date-time in ISO 8601 form, years 1–9999: what the database holds exactly. */
export const isoDate = z.string().refine(isStorableDate, 'expected a real date (ISO 8601, years 1–9999)');
/** A calendar day, YYYY-MM-DD, that exists. */
export const isoDay = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a day (YYYY-MM-DD)')
  .refine(isStorableDate, 'expected a real day (YYYY-MM-DD)');

/** A catalogue model id: `org/name` as the Hugging Face hub spells them. */
export const localModelId = z.string().regex(/^[A-Za-z0-9][\w.-]{0,95}\/[A-Za-z0-9][\w.-]{0,95}$/, 'expected a model id like org/name');
