/** A change's page, of a run with several agents (`--fallback`): which one ran the last iteration, and what each ran and spent. */
import type { AgentNote, DashboardDetail } from "@spool/core"
import { append, el, keyed, setClass, setText } from "./dom.js"
import { agentShare, clock } from "./format.js"

/** Whether the page shows the run's agents: only when it has several, so a run of one agent reads as ever. */
export const hasSeveralAgents = (detail: Pick<DashboardDetail, "agents">): boolean => detail.agents.length > 1

/** `codex:gpt-5.5 2 iterations (15.2k tokens, cost unknown)`, with `· limited until 14:03:09` while a usage limit holds it. */
const agentLine = (note: AgentNote): string =>
  agentShare(note) + (note.limitedUntil === null ? "" : " · limited until " + clock(note.limitedUntil))

export const agentsView = () => {
  const list = el("div", "agent-list")
  const card = append(el("div", "card agents"), append(el("div", "card-head"), el("h2", null, "Agents")), append(el("div", "card-body"), list))
  const sync = keyed<{ readonly note: AgentNote; readonly current: boolean }, HTMLDivElement>(
    list,
    ({ note }) => note.agent,
    () => el("div"),
    (node, { note, current }) => {
      setClass(node, current ? "agent current" : "agent")
      setText(node, agentLine(note))
    }
  )
  const update = (detail: DashboardDetail) => sync(detail.agents.map((note) => ({ note, current: note.agent === detail.agent })))
  return { card, update }
}
