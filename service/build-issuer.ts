import { StoreUnavailableError } from '../core/errors/errors.ts';
import type { BuildMap } from './build-maps.ts';

/**
 * A live build made for another issuer than the gateway's. It is refused whole, like a build
 * whose statement does not check: serving it would answer its signed records under one issuer
 * and never-audited records, problem types and the schema address under another.
 */
export class IssuerMismatchError extends StoreUnavailableError {
  constructor(
    readonly build: string,
    readonly buildIssuer: string,
    readonly gatewayIssuer: string,
  ) {
    super(
      `build ${build} refused: its issuer is ${buildIssuer}, this gateway's (--issuer / MVR_ISSUER) is ${gatewayIssuer}; build with --issuer ${gatewayIssuer}, or serve with --issuer ${buildIssuer}`,
    );
  }
}

/** The build's map, when its signed statement names the gateway's issuer ({@link IssuerMismatchError} otherwise). */
export function checkBuildIssuer<M extends BuildMap>(m: M, issuer: string): M {
  if (m.statement.issuer !== issuer) throw new IssuerMismatchError(m.build, String(m.statement.issuer), issuer);
  return m;
}
