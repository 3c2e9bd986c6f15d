import { getHeapStatistics, setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

/**
 * V8 grows its heap lazily: while an agent prints hundreds of MiB, resident memory would climb
 * past 200 MiB although only ~15 MiB is live. A full collection whenever the heap has grown by
 * `headroom` since the last one keeps the footprint bounded, at a few milliseconds a collection.
 */
export const startMemoryGovernor = (headroom = 16 * 1024 * 1024, everyMs = 20) => {
  setFlagsFromString("--expose-gc")
  const collect = runInNewContext("gc") as (() => void) | undefined
  if (typeof collect !== "function") return
  let floor = getHeapStatistics().used_heap_size
  setInterval(() => {
    const used = getHeapStatistics().used_heap_size
    if (used > floor + headroom) {
      collect()
      floor = getHeapStatistics().used_heap_size
    }
  }, everyMs).unref()
}
