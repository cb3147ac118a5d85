/**
 * The command a mistyped one most likely meant ("Did you mean…", like git and gh). Words are
 * compared as typed: oclif joins every word before the first flag into one id, so arguments may
 * follow the command words and only the candidate's own number of words is compared.
 */
export function closestCommand(typed: string[], commandIds: string[], topicIds: string[]): string | undefined {
  let best: { id: string; distance: number; words: number } | undefined;
  const consider = (id: string, isTopic: boolean) => {
    const words = id.split(':');
    // A topic takes no arguments: it can only be what was meant when nothing follows it.
    if (words.length > typed.length || (isTopic && words.length !== typed.length)) return;
    const wanted = words.join(' ');
    const distance = editDistance(typed.slice(0, words.length).join(' '), wanted);
    if (distance > Math.max(1, Math.floor(wanted.length / 4))) return;
    if (!best || distance < best.distance || (distance === best.distance && words.length > best.words)) best = { id, distance, words: words.length };
  };
  for (const id of commandIds) consider(id, false);
  for (const id of topicIds) consider(id, true);
  return best?.id.split(':').join(' ');
}

/** Optimal string alignment distance: a swap of two neighbours (agnets) counts as one edit. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}
