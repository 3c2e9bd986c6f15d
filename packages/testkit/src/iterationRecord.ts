/*
 * The builder of an iteration's record, for the other packages' tests. It lives beside core's tests,
 * which cannot import this package (it depends on @spool/core), so there is one copy for all.
 */
export { iterationRecord } from "../../core/test/fixtures/iterationRecord.js"
