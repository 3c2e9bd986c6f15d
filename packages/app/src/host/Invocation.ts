import { Context, Layer } from "effect"

export type Env = Readonly<Record<string, string | undefined>>

/**
 * What spool was started with: read from the process once, at the edge (`bin.ts`), and handed down,
 * so that the modules below read no process-wide state and a test can run spool in its own process.
 */
export class Invocation extends Context.Tag("@spool/app/Invocation")<Invocation, {
  /** The directory spool was started in. */
  readonly cwd: string
  readonly env: Env
  /** This process, as the loop's lock records it. */
  readonly pid: number
  /** Whether a person can be asked (a terminal on stdin). */
  readonly stdinIsTTY: boolean
  /** Whether spool runs as root (claude refuses some flags then). */
  readonly isRoot: boolean
}>() {}

export type InvocationShape = Invocation["Type"]

/** An invocation for a test: a directory, an environment of its own, no terminal, not root. */
export const make = (cwd: string, overrides: Partial<Omit<InvocationShape, "cwd">> = {}): InvocationShape => ({
  cwd,
  env: {},
  pid: 1,
  stdinIsTTY: false,
  isRoot: false,
  ...overrides
})

export const layerTest = (cwd: string, overrides: Partial<Omit<InvocationShape, "cwd">> = {}) =>
  Layer.succeed(Invocation, make(cwd, overrides))
