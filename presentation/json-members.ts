/**
 * The JSON this project defines names its members in snake_case (`build_id`, `last_audited_at`),
 * whatever the TypeScript value it comes from calls them. Members a standard names (JWK, RFC 9457)
 * are already lower case, and member names that are data (a status, a tier, a witness's name) are
 * written as they are: only a lower-case letter or digit followed by a capital is split.
 */

/** `ageDays` -> `age_days`; a name without a capital stays as it is. */
export function snakeCase(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/**
 * `value` with every plain object's member names in snake_case, at any depth (arrays walked), for
 * an edge that writes a value of the code as JSON.
 *
 * @example snakeCaseMembers({ buildId: 'b', byTier: { gold: 1 } }) // { build_id: 'b', by_tier: { gold: 1 } }
 */
export function snakeCaseMembers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeCaseMembers);
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [snakeCase(key), snakeCaseMembers(v)]));
}
