import * as fs from "node:fs"

/** Field `n` (1-based, as in proc(5)) of /proc/<pid>/stat: the fields after the command name, which may hold spaces. */
const statFields = (pid: string): Array<string> | null => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  } catch {
    // Gone since the directory was listed, or no /proc on this system.
    return null
  }
}

/**
 * The process groups of `pid`'s descendants that are not its own group: an agent that starts a
 * command in a group of its own (`detached`) puts it out of reach of a signal to the agent's group.
 * Read from /proc; empty where there is none.
 */
export const escapedGroups = (pid: number): Array<number> => {
  let entries: Array<string>
  try {
    entries = fs.readdirSync("/proc")
  } catch {
    return []
  }
  const children = new Map<number, Array<{ pid: number; group: number }>>()
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    const fields = statFields(entry)
    if (fields === null) continue
    // After the name: state, ppid, pgrp.
    const parent = Number(fields[1])
    const list = children.get(parent) ?? []
    list.push({ pid: Number(entry), group: Number(fields[2]) })
    children.set(parent, list)
  }
  const own = Number(statFields("self")?.[2] ?? NaN)
  const groups = new Set<number>()
  const queue = [pid]
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    for (const child of children.get(next) ?? []) {
      if (child.group !== pid && child.group > 1 && child.group !== own) groups.add(child.group)
      queue.push(child.pid)
    }
  }
  return [...groups]
}
