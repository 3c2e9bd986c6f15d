/**
 * An error's text with what changes from one occurrence to the next (times, ids, paths, numbers)
 * replaced, so that the same failure repeated is recognised as the same.
 */
export const errorFingerprint = (text: string): string =>
  text
    .toLowerCase()
    .replace(/\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(z|[+-]\d{2}:?\d{2})?/g, "<time>")
    .replace(/\b\d{1,2}:\d{2}(:\d{2})?(\s?[ap]m)?\b/g, "<time>")
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, "<id>")
    .replace(/(?:[a-z]:)?(?:[\\/][\w.@~+-]+){2,}[\\/]?/g, "<path>")
    .replace(/\b(?=[a-z_-]*\d)[a-z0-9_-]{12,}\b/g, "<id>")
    .replace(/\b[0-9a-f]{7,}\b/g, "<id>")
    .replace(/\d+(\.\d+)?/g, "<n>")
    .replace(/\s+/g, " ")
    .trim()
