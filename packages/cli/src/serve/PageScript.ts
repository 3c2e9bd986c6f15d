/**
 * The dashboard's script, served as `/app.js`: the TypeScript of `page/` (DOM-typed, reading core's
 * view types), bundled at build time by `page.mjs` into one browser script with nothing from
 * elsewhere. It builds every node with `createElement` / `createElementNS`, sets words as text, and
 * updates the nodes in place as server-sent events (`/events`, `/events/<change-id>`) come.
 */
declare const SPOOL_PAGE_SCRIPT: string

export const pageScript: string = SPOOL_PAGE_SCRIPT
