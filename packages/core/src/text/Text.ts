/** Small text helpers shared by every room: a leaf, importing nothing. */

/** Whitespace collapsed, cut at `max` characters. */
export const oneLine = (text: string, max = 200) => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}
