const distance = (a: string, b: string) => {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}

/** The candidate closest to what was typed, if it is close enough to be what was meant. */
export const closest = (typed: string, candidates: ReadonlyArray<string>): string | null => {
  const lower = typed.toLowerCase()
  const prefixed = candidates.filter((candidate) => lower.length >= 3 && candidate.startsWith(lower))
  if (prefixed.length === 1) return prefixed[0]!
  let best: string | null = null
  let bestDistance = Infinity
  for (const candidate of candidates) {
    const d = distance(lower, candidate)
    if (d < bestDistance) [best, bestDistance] = [candidate, d]
  }
  return best !== null && bestDistance <= Math.min(3, Math.ceil(best.length / 3)) && bestDistance <= typed.length - 2 ? best : null
}
