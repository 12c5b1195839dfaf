import type { KeySet } from '@merchant-verify/verifier';
import { z } from 'zod';
import type { SameShape } from './same-shape.ts';

/** The public JWK Set (RFC 7517) of Ed25519 keys that verify record signatures. */
export const keySetSchema = z
  .strictObject({
    keys: z.array(
      z.strictObject({
        kty: z.literal('OKP'),
        crv: z.literal('Ed25519'),
        x: z
          .string()
          .regex(/^[A-Za-z0-9_-]{43}$/)
          .describe('The public key, 32 bytes in base64url'),
        kid: z.string().min(1).describe('RFC 7638 thumbprint; what a record names in key_id'),
        use: z.literal('sig'),
        alg: z.literal('EdDSA'),
      }),
    ),
  })
  .meta({ title: 'Key set' });

// The portable verifier declares this shape as a type (it carries no schema library): the two
// must agree, or this line does not compile.
true satisfies SameShape<z.infer<typeof keySetSchema>, KeySet>;
