import { resolve } from 'node:path';
import { z } from 'zod';

// The schemas the option tables share (cli/options.ts, cli/options-serve.ts).

export const wholeNumber = (
  min: number,
  max = Number.MAX_SAFE_INTEGER,
  message = min === 0 ? 'must be a whole number (0 turns it off)' : 'must be a positive whole number',
) => z.string().regex(/^\d+$/, message).transform(Number).pipe(z.number().min(min, message).max(max, message));
export const folder = z
  .string()
  .min(1)
  .transform((p) => resolve(p));
export const optionalText = z.string().min(1).optional();
