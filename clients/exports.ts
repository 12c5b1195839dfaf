/**
 * What `merchant-verify/verifier` (and `merchant-verify`) export: the @merchant-verify/verifier
 * package as it is, so the service and the portable package verify with the very same code.
 */
export * from '@merchant-verify/verifier';
