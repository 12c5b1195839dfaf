/**
 * Type-level agreement of a zod schema with a shape the portable verifier declares as a plain
 * TypeScript type (the verifier carries no schema library):
 * `true satisfies SameShape<z.infer<typeof schema>, VerifierType>` compiles only when each is
 * assignable to the other. An index signature (`looseObject`: "more members may be added") is
 * left out of the comparison, as an interface cannot state one implicitly.
 */
export type SameShape<A, B> = [Known<A>] extends [Known<B>] ? ([Known<B>] extends [Known<A>] ? true : never) : never;

type Known<T> = T extends readonly (infer U)[]
  ? Known<U>[]
  : T extends object
    ? { [K in keyof T as string extends K ? never : K]: Known<T[K]> }
    : T;
