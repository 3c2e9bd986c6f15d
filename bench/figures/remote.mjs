// What `--remote` costs per iteration: a loop of `iterations` iterations kept on a remote
// (`spool ralph --remote origin`) next to the same loop kept locally (`--worktree`, as `--remote`
// runs in the change's worktree too), same agent, same repository; and, in the same rounds, a plain
// `git push` of one new commit to the same remote, `iterations` times. The remote is a `git daemon`
// on 127.0.0.1 serving a bare copy of the example workspace over git://.
//
// Both loops commit each iteration's file, so their difference is what the remote adds: after each
// iteration a state commit, a lease commit and one `git push --atomic --force-with-lease` of the
// branch, the state and the lease. Per iteration it is measured between the starts of successive
// iterations (the records' `startedAt`): the remote loop's median gap minus the local loop's in
// the same round, the median of the rounds' differences. The runs' wall times give the same per
// iteration plus what a run does once (takes the lease, looks for the branch and state on the
// remote, gives the lease up). A traced run of each loop tells which git commands an iteration's
// push is made of, what each costs, and what spool does around them.
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { createBare, startGitDaemon } from "../lib/gitDaemon.mjs"
import { median, program, timeOnce } from "../lib/measure.mjs"
import { clearLoopState, git, smallWorkspace, temporaryDirectory } from "../lib/repo.mjs"
import { CHANGE_ID, harnessCommand, loopArgs, spoolProgram, stateDir } from "../lib/spool.mjs"

const BRANCH = `refs/heads/spool/${CHANGE_ID}`
const STATE = `refs/spool/state/${CHANGE_ID}`
const LEASE = `refs/spool/lease/${CHANGE_ID}`
const PUSHED = "refs/heads/bench-push"

/** Writes one small file per iteration and never claims completion: every iteration commits one file. */
const agent = harnessCommand("sh", "-c", 'echo "$SPOOL_ITERATION" > "bench-$SPOOL_ITERATION.txt"')

const refsUnder = (dir, ...prefixes) => git(dir, "for-each-ref", "--format=%(refname)", ...prefixes).split("\n").filter(Boolean)
const dropRefs = (dir, ...prefixes) => {
  for (const ref of refsUnder(dir, ...prefixes)) git(dir, "update-ref", "-d", ref)
}

/** A clone of `url` in `dir` with an identity and no automatic gc, which would fall on one run and not another. */
const cloneOf = (url, dir) => {
  git(join(dir, ".."), "clone", "-q", url, dir)
  for (const [key, value] of [["user.name", "Bench"], ["user.email", "bench@example.invalid"], ["commit.gpgsign", "false"], ["gc.auto", "0"]]) {
    git(dir, "config", key, value)
  }
  return dir
}

/** The records of the last run in `cwd` (each run starts from no state). */
const records = (cwd) =>
  readFileSync(join(stateDir(cwd), "history.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line))

/** The gaps (ms) between the starts of successive iterations of a run. */
const gaps = (list) => list.slice(1).map((r, i) => Date.parse(r.startedAt) - Date.parse(list[i].startedAt))

/** A trace2 timestamp ("...T13:57:13.603859Z") in milliseconds, microseconds kept. */
const traceTime = (time) => {
  const match = /^(.*T\d\d:\d\d:\d\d)(\.\d+)?Z$/.exec(time)
  return Date.parse(`${match[1]}Z`) + (match[2] === undefined ? 0 : Number(match[2]) * 1000)
}

/** The top-level git processes of a GIT_TRACE2_EVENT file, in the order they started: argv (without `-c` pairs), start and end (ms), time inside git (ms). */
const tracedProcesses = (file) => {
  const started = new Map()
  const done = []
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line === "") continue
    const event = JSON.parse(line)
    // A child of a git command (push's pack-objects) has its parent's sid before a slash: its time is inside its parent's.
    if (event.sid.includes("/")) continue
    if (event.event === "start") {
      const args = event.argv.slice(1)
      while (args[0] === "-c") args.splice(0, 2)
      started.set(event.sid, { args, start: traceTime(event.time) - event.t_abs * 1000 })
    } else if (event.event === "exit" && started.has(event.sid)) {
      const p = started.get(event.sid)
      done.push({ ...p, inside: event.t_abs * 1000, end: p.start + event.t_abs * 1000 })
    }
  }
  return done.sort((a, b) => a.start - b.start)
}

/** What each command of a checkpoint is for, from its arguments. */
const labelOf = (args) => {
  const [name] = args
  if (name === "fast-import") return "fast-import (the state's and the lease's commits)"
  if (name === "rev-parse") return "rev-parse (the branch is there)"
  if (name === "push") return "push --atomic (branch, state, lease)"
  return args.slice(0, 2).join(" ")
}

/** Whether a command is the push of an iteration: the branch and the state with the lease. */
const isCheckpointPush = (args) => args[0] === "push" && args.some((a) => a.endsWith(`:${STATE}`))

/**
 * Each iteration's push in a traced remote run: the git commands from the first one after the
 * iteration's commit that writes objects for the remote (`fast-import`, where git must write them)
 * to the push of branch, state and lease, with their time inside git, and the span. spool writes
 * the state's and the lease's commits into the object store itself, so on a SHA-1 repository the
 * push is the one command.
 */
const checkpoints = (file) => {
  const list = []
  let current = []
  for (const p of tracedProcesses(file)) {
    if (p.args[0] === "fast-import") current = [{ label: labelOf(p.args), ...p }]
    if (p.args[0] !== "push") continue
    if (isCheckpointPush(p.args)) {
      const commands = [...current, { label: labelOf(p.args), ...p }]
      const inside = commands.reduce((sum, c) => sum + c.inside, 0)
      list.push({ commands, span: commands.at(-1).end - commands[0].start, inside })
    }
    // A push of the lease alone (taken, renewed) is not an iteration's.
    current = []
  }
  return list
}

/** The commands of a traced run for the remote outside its iterations' pushes: what a run does once. */
const onceCommands = (file, inCheckpoints) =>
  tracedProcesses(file)
    .filter((p) => !inCheckpoints.has(p.start) && ["remote", "ls-remote", "fetch", "push", "fast-import"].includes(p.args[0]))
    .map((p) => {
      const [name] = p.args
      const label = name === "ls-remote"
        ? p.args.includes(LEASE) ? "ls-remote (the lease)" : "ls-remote (branch and state)"
        : name === "push"
        ? p.args.some((a) => a.startsWith(":")) ? "push (the lease given up)" : "push (the lease taken)"
        : name === "fast-import" ? "fast-import (the lease's commit)"
        : p.args.slice(0, 2).join(" ")
      return { label, inside: p.inside }
    })

/**
 * The window after each iteration's commit, from the end of the commit's last command (`rev-parse
 * --verify HEAD`) to the start of the next iteration's first (`git log` of the recent commits): with
 * `--remote` the iteration's push falls in it, and nothing else differs there.
 */
const afterCommit = (processes) =>
  processes.flatMap((p, i) => {
    if (p.args.join(" ") !== "rev-parse --verify HEAD") return []
    const next = processes.slice(i + 1).find((q) => q.args[0] === "log")
    return next === undefined ? [] : [next.start - p.end]
  })

/** Medians per command label and of the spans, over the checkpoints of a traced run. */
const breakdownOf = (list) => {
  const byLabel = new Map()
  for (const c of list) for (const command of c.commands) byLabel.set(command.label, [...(byLabel.get(command.label) ?? []), command.inside])
  return {
    checkpoints: list.length,
    commands: median(list.map((c) => c.commands.length)),
    span: median(list.map((c) => c.span)),
    inside: median(list.map((c) => c.inside)),
    between: median(list.map((c) => c.span - c.inside)),
    byCommand: [...byLabel].map(([label, values]) => ({ label, median: median(values), count: values.length }))
  }
}

export const remoteOverhead = async ({ iterations, runs, tracedIterations = Math.min(iterations, 10) }) => {
  const base = temporaryDirectory("spool-bench-remote-")
  const daemon = await startGitDaemon(join(base, "served"))
  try {
    const bare = createBare(daemon.bare("workspace"), smallWorkspace())
    // No gc after a push, which would fall on one run and not another.
    git(bare, "config", "receive.autogc", "false")
    const url = daemon.url("workspace")
    const remoteClone = cloneOf(url, join(base, "remote"))
    const localClone = cloneOf(url, join(base, "local"))
    const pusher = cloneOf(url, join(base, "pusher"))
    const mainSha = git(bare, "rev-parse", "refs/heads/main").trim()

    /** Every round starts alike: no loop state, worktree or branch in the clone, nothing of the loop's on the remote. */
    const reset = (clone) => {
      clearLoopState(clone)
      git(clone, "worktree", "prune")
      dropRefs(clone, "refs/heads/spool/", "refs/spool/", "refs/remotes/origin/spool/", "refs/remotes/origin/bench-push")
      dropRefs(bare, "refs/heads/spool/", "refs/spool/", PUSHED)
    }
    const loop = (n, extra) => loopArgs(agent, ["--max-iterations", String(n), ...extra])
    const remoteRun = (n, env = {}) => spoolProgram("loop with --remote origin", loop(n, ["--remote", "origin"]), { cwd: remoteClone, codes: [3], env })
    const localRun = (n, env = {}) => spoolProgram("loop with --worktree", loop(n, ["--worktree"]), { cwd: localClone, codes: [3], env })

    const checkRemote = (n) => {
      const pushed = Number(git(bare, "rev-list", "--count", `${mainSha}..${BRANCH}`).trim())
      if (pushed !== n) throw new Error(`the remote has ${pushed} commits of the loop on ${BRANCH}, not ${n}`)
      if (refsUnder(bare, STATE).length !== 1) throw new Error(`the remote has no ${STATE}`)
      if (refsUnder(bare, LEASE).length !== 0) throw new Error(`the lease ${LEASE} was not given up`)
      const list = records(remoteClone)
      if (list.length !== n) throw new Error(`the remote loop recorded ${list.length} iterations, not ${n}`)
      return list
    }
    const checkLocal = (n) => {
      const made = Number(git(localClone, "rev-list", "--count", `${mainSha}..${BRANCH}`).trim())
      if (made !== n) throw new Error(`the local loop made ${made} commits, not ${n}`)
      const list = records(localClone)
      if (list.length !== n) throw new Error(`the local loop recorded ${list.length} iterations, not ${n}`)
      return list
    }

    /** `n` new commits of one file each on main's tip in the pusher clone, untimed; their shas in order. */
    const commitsToPush = (n, round) => {
      git(pusher, "checkout", "-q", "-B", "bench-push", mainSha)
      return Array.from({ length: n }, (_, i) => {
        writeFileSync(join(pusher, `bench-${i + 1}.txt`), `${round} ${i + 1}\n`)
        git(pusher, "add", `bench-${i + 1}.txt`)
        git(pusher, "commit", "-q", "-m", `bench ${round} ${i + 1}`)
        return git(pusher, "rev-parse", "HEAD").trim()
      })
    }
    const pushes = (shas, env = {}) => {
      reset(pusher)
      return shas.map((sha) => timeOnce(program("git push", "git", ["push", "origin", `${sha}:${PUSHED}`], { cwd: pusher, env: { ...process.env, ...env } })))
    }

    // A warm-up round, short: the disk cache, V8's code cache, the daemon.
    reset(remoteClone)
    timeOnce(remoteRun(2))
    checkRemote(2)
    reset(localClone)
    timeOnce(localRun(2))
    checkLocal(2)
    pushes(commitsToPush(2, 0))

    const rounds = []
    const pushMs = []
    for (let round = 1; round <= runs; round++) {
      // Each round's two loops, one after the other, first one then the other first: a busy moment of
      // the machine falls on one of a round's loops, and the median over rounds leaves that round out.
      const measure = {
        remote: () => {
          reset(remoteClone)
          const ms = timeOnce(remoteRun(iterations))
          return { ms, gap: median(gaps(checkRemote(iterations))) }
        },
        local: () => {
          reset(localClone)
          const ms = timeOnce(localRun(iterations))
          return { ms, gap: median(gaps(checkLocal(iterations))) }
        }
      }
      const order = round % 2 === 1 ? ["remote", "local"] : ["local", "remote"]
      const measured = Object.fromEntries(order.map((side) => [side, measure[side]()]))
      rounds.push({ remote: measured.remote, local: measured.local, difference: measured.remote.gap - measured.local.gap })
      pushMs.push(...pushes(commitsToPush(iterations, round)))
    }
    const pushedCount = Number(git(bare, "rev-list", "--count", `${mainSha}..${PUSHED}`).trim())
    if (pushedCount !== iterations) throw new Error(`the plain pushes left ${pushedCount} commits on ${PUSHED}, not ${iterations}`)

    // The traced pass, apart from the timed rounds: which git commands make an iteration's push.
    const remoteTrace = join(base, "remote-trace2.json")
    const localTrace = join(base, "local-trace2.json")
    const pushTrace = join(base, "push-trace2.json")
    reset(remoteClone)
    timeOnce(remoteRun(tracedIterations, { GIT_TRACE2_EVENT: remoteTrace }))
    checkRemote(tracedIterations)
    reset(localClone)
    timeOnce(localRun(tracedIterations, { GIT_TRACE2_EVENT: localTrace }))
    checkLocal(tracedIterations)
    pushes(commitsToPush(tracedIterations, runs + 1), { GIT_TRACE2_EVENT: pushTrace })
    const traced = checkpoints(remoteTrace)
    const breakdown = breakdownOf(traced)
    if (breakdown.checkpoints !== tracedIterations) throw new Error(`the traced run made ${breakdown.checkpoints} pushes, not ${tracedIterations}`)
    breakdown.once = onceCommands(remoteTrace, new Set(traced.flatMap((c) => c.commands.map((command) => command.start))))
    breakdown.plainPushInside = median(tracedProcesses(pushTrace).filter((p) => p.args[0] === "push").map((p) => p.inside))
    // Where the traced runs differ: the window after each iteration's commit, which holds the push.
    // (Their whole iterations are not compared: one run of each is too few on a busy machine.)
    breakdown.window = { remote: median(afterCommit(tracedProcesses(remoteTrace))), local: median(afterCommit(tracedProcesses(localTrace))) }
    breakdown.around = breakdown.window.remote - breakdown.window.local - breakdown.span
    for (const file of [remoteTrace, localTrace, pushTrace]) rmSync(file, { force: true })

    const remote = { median: median(rounds.map((r) => r.remote.ms)), runs: rounds.map((r) => r.remote.ms) }
    const local = { median: median(rounds.map((r) => r.local.ms)), runs: rounds.map((r) => r.local.ms) }
    const perIteration = median(rounds.map((r) => r.difference))
    const wholeRun = remote.median - local.median
    return {
      iterations,
      runs,
      remote,
      local,
      gaps: { remote: median(rounds.map((r) => r.remote.gap)), local: median(rounds.map((r) => r.local.gap)), perRun: iterations - 1 },
      rounds,
      perIteration,
      wholeRunPerIteration: wholeRun / iterations,
      oneTime: wholeRun - iterations * perIteration,
      push: { median: median(pushMs), runs: pushMs },
      breakdown,
      tracedIterations
    }
  } finally {
    await daemon.stop()
  }
}
