import type { LockIdentity } from "@spool/core"
import { hostname } from "node:os"

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists, it is just not ours.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** The process `pid` (this one, as the invocation says), as the lock file records it. */
export const lockIdentity = (pid: number): LockIdentity => ({ pid, host: hostname(), isAlive })
