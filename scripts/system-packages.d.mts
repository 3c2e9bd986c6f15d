export interface Need {
  readonly pkg: string
  readonly command?: string
  readonly path?: string
  readonly usedBy: string
}
export const needs: ReadonlyArray<Need>
export const onPath: (command: string, path?: string) => boolean
export const missing: (list: ReadonlyArray<Need>, present: (need: Need) => boolean) => Array<Need>
export const presentOnThisMachine: (need: Need) => boolean
export const installer: (machine: { uid: number; hasAptGet: boolean; hasSudo: boolean }) => Array<string> | null
export const adviceLine: (list: ReadonlyArray<Need>) => string
