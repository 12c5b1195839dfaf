import { z } from 'zod';
import { MAX_DOMAIN_INPUT } from './domain.ts';

// The schema of a domain input, apart from the rule itself (domain.ts): the verify page bundles
// the rule for the browser, and this schema would bring zod with it.

/**
 * A domain as a caller gives it (`domain=` over HTTP, `domain` of the MCP tools): a hostname or a
 * URL on it, which `normalizeDomain` reduces to the record key.
 */
export const domainInputSchema = z
  .string()
  .min(1)
  .max(MAX_DOMAIN_INPUT)
  .describe('A hostname or URL; reduced to its registrable domain (eTLD+1), lowercase A-label form.');
