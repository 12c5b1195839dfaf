import type { PublicJwk } from '@merchant-verify/verifier';
import { z } from 'zod';
import { KEY_ENDORSEMENT_TYPE } from '#shared';
import type { PublishedKeySet } from '../rules/key-endorsement.ts';
import type { SameShape } from '../same-shape.ts';

/** The public JWK Set (RFC 7517) of Ed25519 keys that verify record signatures. */
const publicJwkSchema = z.strictObject({
  kty: z.literal('OKP'),
  crv: z.literal('Ed25519'),
  x: z
    .string()
    .regex(/^[A-Za-z0-9_-]{43}$/)
    .describe('The public key, 32 bytes in base64url'),
  kid: z.string().min(1).describe('RFC 7638 thumbprint; what a record names in key_id'),
  use: z.literal('sig'),
  alg: z.literal('EdDSA'),
});

const endorsementSchema = z
  .strictObject({
    type: z.literal(KEY_ENDORSEMENT_TYPE),
    key: publicJwkSchema.describe('The endorsed key'),
    issued_at: z.string().describe('When it was endorsed (RFC 3339, UTC)'),
    key_id: z.string().min(1).describe('The endorsing key'),
    signature: z.string().describe('ed25519: + base64url, over the RFC 8785 bytes less key_id and signature, as a record'),
  })
  .meta({ title: 'Key endorsement' });

export const keySetSchema = z
  .strictObject({
    keys: z.array(publicJwkSchema),
    endorsements: z
      .array(endorsementSchema)
      .optional()
      .describe('Keys endorsed by other keys (at a rotation): a verifier that trusts a key trusts the keys it endorsed, link by link'),
  })
  .meta({ title: 'Key set' });

// The portable verifier declares these shapes as types (it carries no schema library): they
// must agree, or these lines do not compile.
true satisfies SameShape<z.infer<typeof publicJwkSchema>, PublicJwk>;
true satisfies SameShape<z.infer<typeof keySetSchema>, PublishedKeySet>;
