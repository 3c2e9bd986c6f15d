/*
 * A loop's options for the other packages' tests, beside the record builder: one copy, kept with
 * core's tests, which cannot import this package.
 */
export { options as loopOptions } from "../../core/test/fixtures/loopOptions.js"
