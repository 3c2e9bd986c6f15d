import { describe, expect, it } from "vitest"
import {
  agentRules,
  agentStateDirs,
  BASE_ENV,
  checkRules,
  hostOfUrl,
  noSettings,
  pickEnv,
  SECRET_PLACES,
  type SandboxNeeds,
  type SandboxPlace
} from "../src/sandbox/SandboxPolicy.js"

const main: SandboxPlace = {
  workTree: "/repo",
  gitCommonDir: "/repo/.git",
  gitDir: "/repo/.git",
  spoolDirs: ["/repo/.spool/.state"],
  tmpDir: "/tmp/spool-sandbox-1",
  home: "/home/ada"
}

// spool's directories of the main tree hold the worktree (a wall over them would shut it), and the worktree has its own.
const worktree: SandboxPlace = {
  ...main,
  workTree: "/repo/.spool/.state/worktrees/001-01",
  gitDir: "/repo/.git/worktrees/001-01",
  spoolDirs: ["/repo/.spool/.state", "/repo/.spool/.state/worktrees/001-01/.spool/.state"]
}

const claudeLike: SandboxNeeds = {
  stateDirs: [".claude"],
  stateFiles: [".claude.json"],
  stateEnv: ["CLAUDE_CONFIG_DIR", "XDG_DATA_HOME/claude"],
  hosts: ["api.anthropic.com"],
  env: ["ANTHROPIC_*", "IS_SANDBOX"],
  baseUrlEnv: ["ANTHROPIC_BASE_URL"]
}

const hostEnv = {
  PATH: "/usr/bin:/bin",
  HOME: "/home/ada",
  TMPDIR: "/tmp",
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
  TERM: "xterm",
  ANTHROPIC_API_KEY: "sk-ant",
  IS_SANDBOX: "1",
  IS_SANDBOXED: "no",
  AWS_SECRET_ACCESS_KEY: "aws-secret",
  GITHUB_TOKEN: "ghp",
  SSH_AUTH_SOCK: "/run/ssh.sock",
  NPM_TOKEN: "npm",
  NPM_CONFIG_REGISTRY: "https://registry.example",
  UNSET: undefined
}

describe("the sandbox's policy", () => {
  it("an agent in the main work tree writes the tree, its temporary directory and its state, and never git's hooks and config or spool's state", () => {
    const rules = agentRules(claudeLike, noSettings, main, { ...hostEnv, CLAUDE_CONFIG_DIR: "/srv/claude", XDG_DATA_HOME: "relative/not/a/path" })
    expect(rules.allowWrite).toEqual(["/repo", "/tmp/spool-sandbox-1", "/home/ada/.claude", "/home/ada/.claude.json", "/srv/claude"])
    expect(rules.denyWrite).toEqual(["/repo/.git/hooks", "/repo/.git/config", "/repo/.git/config.worktree", "/repo/.git/info/attributes", "/repo/.spool/.state"])
  })

  it("an agent in a worktree also writes its own git directory and the shared objects, refs and logs, and both git directories' hooks and config stay shut", () => {
    const rules = agentRules(claudeLike, noSettings, worktree, { ...hostEnv, XDG_DATA_HOME: "/xdg" })
    expect(rules.allowWrite).toEqual([
      "/repo/.spool/.state/worktrees/001-01",
      "/tmp/spool-sandbox-1",
      "/repo/.git/worktrees/001-01",
      "/repo/.git/objects",
      "/repo/.git/refs",
      "/repo/.git/logs",
      "/home/ada/.claude",
      "/home/ada/.claude.json",
      "/xdg/claude"
    ])
    expect(rules.denyWrite).toEqual([
      "/repo/.git/hooks",
      "/repo/.git/config",
      "/repo/.git/config.worktree",
      "/repo/.git/info/attributes",
      "/repo/.git/worktrees/001-01/hooks",
      "/repo/.git/worktrees/001-01/config",
      "/repo/.git/worktrees/001-01/config.worktree",
      "/repo/.git/worktrees/001-01/info/attributes",
      "/repo/.spool/.state/worktrees/001-01/.spool/.state"
    ])
  })

  it("a directory of spool's beside the work tree whose name starts the same is still shut", () => {
    const rules = agentRules(claudeLike, noSettings, { ...main, workTree: "/repo/.spool/.state-x", spoolDirs: ["/repo/.spool/.state", "/"] }, hostEnv)
    expect(rules.denyWrite).toContain("/repo/.spool/.state")
    expect(rules.denyWrite).not.toContain("/")
  })

  it("outside git there is nothing of git's to write or guard", () => {
    const rules = agentRules(claudeLike, noSettings, { ...main, gitCommonDir: null, gitDir: null }, hostEnv)
    expect(rules.allowWrite).toEqual(["/repo", "/tmp/spool-sandbox-1", "/home/ada/.claude", "/home/ada/.claude.json"])
    expect(rules.denyWrite).toEqual(["/repo/.spool/.state"])
  })

  it("the agent's state directories, to be made before it starts, are those under the home directory and those its variables name, never its files", () => {
    const host = { ...hostEnv, CLAUDE_CONFIG_DIR: "/srv/claude", XDG_DATA_HOME: "/xdg" }
    expect(agentStateDirs(claudeLike, main, host)).toEqual(["/home/ada/.claude", "/srv/claude", "/xdg/claude"])
    expect(agentStateDirs(claudeLike, main, { ...hostEnv, XDG_DATA_HOME: "relative/not/a/path" })).toEqual(["/home/ada/.claude"])
    expect(agentStateDirs({ ...claudeLike, stateEnv: ["CLAUDE_CONFIG_DIR"] }, main, { ...hostEnv, CLAUDE_CONFIG_DIR: "/home/ada/.claude" })).toEqual(["/home/ada/.claude"])
    // Each is writable: the walls open them.
    for (const dir of agentStateDirs(claudeLike, main, host)) expect(agentRules(claudeLike, noSettings, main, host).allowWrite).toContain(dir)
  })

  it("reads go everywhere but where secrets live, and --deny-read's paths", () => {
    const rules = agentRules(claudeLike, { ...noSettings, denyRead: ["/srv/private", "/home/ada/.ssh"] }, main, hostEnv)
    expect(rules.denyRead).toEqual([...SECRET_PLACES.map((place) => `/home/ada/${place}`), "/srv/private"])
    expect(rules.denyRead).toContain("/home/ada/.ssh")
    expect(rules.denyRead).toContain("/home/ada/.config/gcloud")
  })

  it("the agent reaches its model's hosts and --allow-host's, and a base URL in its environment takes the place of its hosts", () => {
    expect(agentRules(claudeLike, { ...noSettings, allowHosts: ["registry.npmjs.org"] }, main, hostEnv).hosts).toEqual([
      "api.anthropic.com",
      "registry.npmjs.org"
    ])
    const proxied = agentRules(claudeLike, noSettings, main, { ...hostEnv, ANTHROPIC_BASE_URL: "http://127.0.0.1:4000/v1" })
    expect(proxied.hosts).toEqual(["127.0.0.1:4000"])
    const gateway = agentRules(claudeLike, { ...noSettings, allowHosts: ["gateway.corp"] }, main, { ...hostEnv, ANTHROPIC_BASE_URL: "https://gateway.corp" })
    expect(gateway.hosts).toEqual(["gateway.corp"])
  })

  it("a base URL that is not an http(s) URL is no host, and the model's own hosts stay", () => {
    for (const value of ["not a url", "file:///etc/passwd", "ftp://files.example"]) {
      expect(agentRules(claudeLike, noSettings, main, { ...hostEnv, ANTHROPIC_BASE_URL: value }).hosts).toEqual(["api.anthropic.com"])
    }
  })

  it("a base URL's host counts only when the variable is the agent's: a variable it does not name cannot open a host", () => {
    const needs = { ...claudeLike, env: ["IS_SANDBOX"] }
    expect(agentRules(needs, noSettings, main, { ...hostEnv, ANTHROPIC_BASE_URL: "http://evil.example" }).hosts).toEqual(["api.anthropic.com"])
  })

  it("the agent's environment is the base, its own variables and --pass-env's, with the loop's home and temporary directory: no other secret", () => {
    const rules = agentRules(claudeLike, { ...noSettings, passEnv: ["NPM_*"] }, main, hostEnv)
    expect(rules.env).toEqual({
      PATH: "/usr/bin:/bin",
      HOME: "/home/ada",
      TMPDIR: "/tmp/spool-sandbox-1",
      LANG: "C.UTF-8",
      LC_ALL: "C.UTF-8",
      TERM: "xterm",
      ANTHROPIC_API_KEY: "sk-ant",
      IS_SANDBOX: "1",
      NPM_TOKEN: "npm",
      NPM_CONFIG_REGISTRY: "https://registry.example"
    })
  })

  it("a check writes what the agent may, bar the agent's state; reaches --allow-host's hosts only; and sees no credential of the agent's", () => {
    const rules = checkRules({ allowHosts: ["registry.npmjs.org"], denyRead: [], passEnv: ["GITHUB_TOKEN"] }, worktree, { ...hostEnv, ANTHROPIC_BASE_URL: "http://127.0.0.1:4000" })
    expect(rules.allowWrite).toEqual([
      "/repo/.spool/.state/worktrees/001-01",
      "/tmp/spool-sandbox-1",
      "/repo/.git/worktrees/001-01",
      "/repo/.git/objects",
      "/repo/.git/refs",
      "/repo/.git/logs"
    ])
    expect(rules.denyWrite).toContain("/repo/.git/hooks")
    expect(rules.denyWrite).toContain("/repo/.spool/.state/worktrees/001-01/.spool/.state")
    expect(checkRules(noSettings, main, hostEnv).denyWrite).toContain("/repo/.spool/.state")
    expect(rules.denyRead).toContain("/home/ada/.aws")
    expect(rules.hosts).toEqual(["registry.npmjs.org"])
    expect(rules.env).toEqual({ PATH: "/usr/bin:/bin", HOME: "/home/ada", TMPDIR: "/tmp/spool-sandbox-1", LANG: "C.UTF-8", LC_ALL: "C.UTF-8", TERM: "xterm", GITHUB_TOKEN: "ghp" })
    expect(checkRules(noSettings, main, hostEnv).hosts).toEqual([])
  })

  it("the same host, path or directory is named once", () => {
    const rules = agentRules({ ...claudeLike, hosts: ["a.example", "a.example"] }, { ...noSettings, allowHosts: ["a.example"] }, { ...main, tmpDir: "/repo" }, hostEnv)
    expect(rules.hosts).toEqual(["a.example"])
    expect(rules.allowWrite.filter((path) => path === "/repo")).toHaveLength(1)
  })

  it("picks variables by name or by prefix, and never one that is unset", () => {
    expect(pickEnv(hostEnv, ["IS_SANDBOX", "LC_*", "UNSET"])).toEqual({ IS_SANDBOX: "1", LC_ALL: "C.UTF-8" })
    expect(pickEnv(hostEnv, [])).toEqual({})
    expect(BASE_ENV).toContain("PATH")
    expect(BASE_ENV).not.toContain("SSH_AUTH_SOCK")
  })

  it("reads a URL's host and port, a bracketed address without its brackets, and nothing from what is not an http(s) URL", () => {
    expect(hostOfUrl("https://api.example.com/v1")).toBe("api.example.com")
    expect(hostOfUrl("http://127.0.0.1:8080")).toBe("127.0.0.1:8080")
    expect(hostOfUrl("http://[::1]:8080/x")).toBe("::1:8080")
    expect(hostOfUrl("http://[::1]/x")).toBe("::1")
    expect(hostOfUrl("ws://example.com")).toBeNull()
    expect(hostOfUrl("example.com")).toBeNull()
  })

  it("a home directory's trailing slashes make no double slash", () => {
    expect(agentRules(claudeLike, noSettings, { ...main, home: "/home/ada/" }, hostEnv).allowWrite).toContain("/home/ada/.claude")
    expect(agentRules(claudeLike, noSettings, { ...main, home: "/home/ada//" }, hostEnv).allowWrite).toContain("/home/ada/.claude")
  })

  it("no additions: nothing more unreadable, reachable or passed in than the policy's own", () => {
    expect(noSettings).toEqual({ allowHosts: [], denyRead: [], passEnv: [] })
    expect(checkRules(noSettings, main, hostEnv).denyRead).toEqual(SECRET_PLACES.map((place) => `/home/ada/${place}`))
  })

  it("an agent that names no state files nor state variables writes only its state directories", () => {
    const rules = agentRules({ stateDirs: [".pi"], hosts: [], env: [], baseUrlEnv: [] }, noSettings, main, hostEnv)
    expect(rules.allowWrite).toEqual(["/repo", "/tmp/spool-sandbox-1", "/home/ada/.pi"])
  })

  it("a state variable's part below it may be deeper than one directory", () => {
    const rules = agentRules({ ...claudeLike, stateEnv: ["XDG_DATA_HOME/vendor/agent"] }, noSettings, main, { ...hostEnv, XDG_DATA_HOME: "/xdg" })
    expect(rules.allowWrite).toContain("/xdg/vendor/agent")
  })

  it("a work tree that is one of spool's directories itself is not walled off", () => {
    const rules = agentRules(claudeLike, noSettings, { ...main, workTree: "/w/.spool/.state", spoolDirs: ["/w/.spool/.state", "/w/.spool/.state-other"] }, hostEnv)
    expect(rules.denyWrite).not.toContain("/w/.spool/.state")
    expect(rules.denyWrite).toContain("/w/.spool/.state-other")
    const slashes = agentRules(claudeLike, noSettings, { ...main, workTree: "/w/.spool/.state/x", spoolDirs: ["/w/.spool/.state//"] }, hostEnv)
    expect(slashes.denyWrite).not.toContain("/w/.spool/.state//")
  })
})
