/**
 * The known name closest to a mistyped one, for "did you mean ...?": the smallest edit distance
 * (insertions, deletions, substitutions, swaps of neighbours), if it is at most a third of the
 * longer name (at least 1, so `biuld` finds `build` but `--x` finds nothing).
 */
export function closestMatch(typed: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of known) {
    const d = editDistance(typed, name);
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  const allowed = Math.max(1, Math.floor(Math.max(typed.length, best?.length ?? 0) / 3));
  return bestDistance <= allowed ? best : undefined;
}

/** Edit distance where swapping two neighbours counts as one edit (optimal string alignment), the commonest typo. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}
