import { GitSummary } from "@spool/core"

export const gitLayer = (_root: string) => GitSummary.layerNone
