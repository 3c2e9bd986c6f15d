import { shapes, type TreeShape } from "@spool/core"

/** How to start a first change in `tree`, for messages that find none. */
export const firstChangeHintFor = (tree: TreeShape) => `start one with: ${tree.firstChange}`

/** How to start a first change in a spool tree. */
export const firstChangeHint = firstChangeHintFor(shapes.spool)
