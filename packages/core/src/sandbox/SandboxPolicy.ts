// What the sandbox lets an agent, and a check, touch: plain data in, plain data out. One place
// decides every wall; the runtime that builds them (`Sandbox`) only carries the rules out.
// Paths are absolute and POSIX (the sandbox runs on Linux and macOS); `--deny-read` comes absolute.

/** What one agent needs to work, as its harness names it. */
export interface SandboxNeeds {
  /** Its own state, relative to the home directory (`.claude`, `.codex`): writable. */
  readonly stateDirs: ReadonlyArray<string>
  /** Files of its own state beside the home directory's top (`.claude.json`): writable. */
  readonly stateFiles?: ReadonlyArray<string>
  /**
   * Variables naming where its state is instead (`CODEX_HOME`), each with a part below it if any
   * (`XDG_DATA_HOME/opencode`): writable when set.
   */
  readonly stateEnv?: ReadonlyArray<string>
  /** The hosts its model API is on, when no base URL of its environment says otherwise. */
  readonly hosts: ReadonlyArray<string>
  /** Its credentials and settings, by name; `PREFIX_*` passes every variable so named. */
  readonly env: ReadonlyArray<string>
  /** Variables that may hold its API's base URL (a proxy, a gateway): their host is allowed too. */
  readonly baseUrlEnv: ReadonlyArray<string>
}

/** The person's own additions (`--allow-host`, `--deny-read` as absolute paths, `--pass-env`). */
export interface SandboxSettings {
  readonly allowHosts: ReadonlyArray<string>
  readonly denyRead: ReadonlyArray<string>
  readonly passEnv: ReadonlyArray<string>
}

export const noSettings: SandboxSettings = { allowHosts: [], denyRead: [], passEnv: [] }

/** Where one loop works, as absolute paths. */
export interface SandboxPlace {
  /** The work tree the agent edits: the main one, or the change's worktree. */
  readonly workTree: string
  /** The repository's `.git` directory shared by every worktree (`git rev-parse --git-common-dir`); null outside git. */
  readonly gitCommonDir: string | null
  /** This work tree's own git directory: `gitCommonDir`, or `gitCommonDir/worktrees/<name>`; null outside git. */
  readonly gitDir: string | null
  /**
   * spool's own files: loops' state, worktrees, merges (`.spool/.state`); never writable, but for
   * one that holds the work tree itself (a worktree is made in one).
   */
  readonly spoolDirs: ReadonlyArray<string>
  /** The loop's private temporary directory. */
  readonly tmpDir: string
  readonly home: string
}

/** The walls around one process: what it may write, what it may not write or read, whom it may reach, what it sees. */
export interface SandboxRules {
  readonly allowWrite: ReadonlyArray<string>
  readonly denyWrite: ReadonlyArray<string>
  readonly denyRead: ReadonlyArray<string>
  /** Hosts it may reach (`host` or `host:port`); nothing else. */
  readonly hosts: ReadonlyArray<string>
  /** Its whole environment, chosen from the host's: nothing else of it reaches the process. */
  readonly env: Readonly<Record<string, string>>
}

/** Where secrets live under a home directory: never readable inside. */
export const SECRET_PLACES = [".ssh", ".aws", ".config/gcloud", ".config/gh", ".netrc", ".docker", ".kube", ".gnupg"] as const

/** What every process needs to run: the search path, home, user, locale, terminal. `LC_*` is every locale variable. */
export const BASE_ENV = ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TZ", "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR"] as const

/** Git's own: never writable, so no hook or setting the agent planted runs in spool's commit. */
const GIT_GUARDED = ["hooks", "config", "config.worktree", "info/attributes"] as const

const wanted = (patterns: ReadonlyArray<string>) => (name: string) =>
  patterns.some((pattern) => (pattern.endsWith("*") ? name.startsWith(pattern.slice(0, -1)) : name === pattern))

/** The variables of `env` that `patterns` name (`NAME`, or `PREFIX_*`). */
export const pickEnv = (env: Readonly<Record<string, string | undefined>>, patterns: ReadonlyArray<string>): Record<string, string> => {
  const keep = wanted(patterns)
  const picked: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) if (value !== undefined && keep(name)) picked[name] = value
  return picked
}

/** The host (and port, if given) of a URL, or null when it is not one. */
export const hostOfUrl = (text: string): string | null => {
  try {
    const url = new URL(text)
    return url.protocol === "http:" || url.protocol === "https:" ? url.host.replace(/^\[|\](?=:|$)/g, "") : null
  } catch {
    return null
  }
}

const unique = (items: ReadonlyArray<string>) => [...new Set(items)]

/** Whether `path` is `dir` or below it. */
const within = (path: string, dir: string) => path === dir || path.startsWith(`${dir.replace(/\/+$/, "")}/`)

/** `rel` under `dir`. */
const join = (dir: string, rel: string) => `${dir.replace(/\/+$/, "")}/${rel}`

/** Git's directories a commit writes to when the work tree is a worktree: its own, and the shared objects and refs. */
const gitWrites = ({ gitCommonDir, gitDir }: SandboxPlace) =>
  gitDir === null || gitCommonDir === null || gitDir === gitCommonDir
    ? [] // none, or inside the work tree already
    : [gitDir, ...["objects", "refs", "logs"].map((dir) => join(gitCommonDir, dir))]

/** Git's own directories' guarded entries. */
const gitGuarded = ({ gitCommonDir, gitDir }: SandboxPlace) =>
  unique([gitCommonDir, gitDir].flatMap((dir) => (dir === null ? [] : GIT_GUARDED.map((entry) => join(dir, entry)))))

const walls = (place: SandboxPlace, settings: SandboxSettings, writable: ReadonlyArray<string>) => ({
  allowWrite: unique([place.workTree, place.tmpDir, ...gitWrites(place), ...writable]),
  // A wall over a directory stands over all below it: spool's directories that hold the work tree
  // (a worktree is made under them) stay open; those outside it are shut already.
  denyWrite: unique([...gitGuarded(place), ...place.spoolDirs.filter((dir) => !within(place.workTree, dir))]),
  denyRead: unique([...SECRET_PLACES.map((entry) => join(place.home, entry)), ...settings.denyRead])
})

/** The environment every sandboxed process gets: the base, `--pass-env`, the loop's temporary directory. */
const baseEnv = (
  host: Readonly<Record<string, string | undefined>>,
  place: SandboxPlace,
  settings: SandboxSettings,
  more: ReadonlyArray<string>
): Record<string, string> => ({
  ...pickEnv(host, [...BASE_ENV, ...more, ...settings.passEnv]),
  HOME: place.home,
  TMPDIR: place.tmpDir
})

/** The state directories the agent's variables name (`stateEnv`), where set to an absolute path. */
const movedState = (needs: SandboxNeeds, host: Readonly<Record<string, string | undefined>>) =>
  (needs.stateEnv ?? []).flatMap((entry) => {
    const [name, ...below] = entry.split("/")
    const dir = host[name!]
    return dir === undefined || !dir.startsWith("/") ? [] : [below.length === 0 ? dir : join(dir, below.join("/"))]
  })

/**
 * The agent's state directories (not its files), absolute: those under the home directory and
 * those its variables name. The runtime opens for writing only what exists, so they are made,
 * empty, before the agent starts, as the agent would make them on its first run.
 */
export const agentStateDirs = (
  needs: SandboxNeeds,
  place: Pick<SandboxPlace, "home">,
  host: Readonly<Record<string, string | undefined>>
): ReadonlyArray<string> => unique([...needs.stateDirs.map((entry) => join(place.home, entry)), ...movedState(needs, host)])

/**
 * The agent's walls: it writes its work tree, its temporary directory and its own state; it reads
 * all but the secrets; it reaches its model's hosts (or those of a base URL its environment sets)
 * and `--allow-host`; it sees the base environment, its own variables and `--pass-env`.
 */
export const agentRules = (
  needs: SandboxNeeds,
  settings: SandboxSettings,
  place: SandboxPlace,
  host: Readonly<Record<string, string | undefined>>
): SandboxRules => {
  const env = baseEnv(host, place, settings, needs.env)
  const state = [...[...needs.stateDirs, ...(needs.stateFiles ?? [])].map((entry) => join(place.home, entry)), ...movedState(needs, host)]
  return {
    ...walls(place, settings, state),
    hosts: agentHosts(needs, settings, host),
    env
  }
}

/**
 * The hosts an agent may reach: its model's (or, where a variable of its own sets a base URL, that
 * URL's host instead) and `--allow-host`'s.
 */
export const agentHosts = (needs: SandboxNeeds, settings: SandboxSettings, host: Readonly<Record<string, string | undefined>>) => {
  const own = pickEnv(host, needs.env)
  const baseUrls = needs.baseUrlEnv.flatMap((name) => {
    const value = own[name]
    const url = value === undefined ? null : hostOfUrl(value)
    return url === null ? [] : [url]
  })
  return unique([...(baseUrls.length > 0 ? baseUrls : needs.hosts), ...settings.allowHosts])
}

/**
 * A check's walls: the agent's files (it runs what the agent wrote), no agent state, and only
 * `--allow-host`'s hosts; the base environment and `--pass-env`, no credentials.
 */
export const checkRules = (
  settings: SandboxSettings,
  place: SandboxPlace,
  host: Readonly<Record<string, string | undefined>>
): SandboxRules => ({
  ...walls(place, settings, []),
  hosts: unique(settings.allowHosts),
  env: baseEnv(host, place, settings, [])
})
