/**
 * A pure function of a string, remembered: the same shops, keys, peers and members come back
 * request after request, so what a request derives from them alone is worked out once. The memo
 * is bounded (emptied when it holds `entries`, rather than tracked as an LRU, so a hit costs one
 * Map lookup) and keeps no input longer than `longestInput`; an input whose computation throws is
 * never kept, so refused junk cannot fill it for free. Since the function is pure, the memo can
 * never change an answer.
 */
export function remembered<T>(compute: (input: string) => T, limits: { entries: number; longestInput: number }): (input: string) => T {
  const recent = new Map<string, T>();
  return (input) => {
    const known = recent.get(input);
    if (known !== undefined) return known;
    const value = compute(input);
    if (input.length <= limits.longestInput) {
      if (recent.size >= limits.entries) recent.clear();
      recent.set(input, value);
    }
    return value;
  };
}
