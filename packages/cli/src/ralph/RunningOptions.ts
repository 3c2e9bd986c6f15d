import { switchOption, valueOption } from "../OptionSpec.js"

/**
 * The options of `spool ralph` that watch over a running loop and tell of it: its guards, its
 * notices and dashboard, its output. Part of the one table of `Options.ts`, in its order.
 */
export const runningOptionSpecs = {
  failFast: switchOption({
    name: "fail-fast",
    group: "guards",
    description: "stop (exit 1) at the first iteration whose harness fails"
  }),
  inactivityTimeout: valueOption({
    name: "inactivity-timeout",
    group: "guards",
    pseudo: "duration",
    default: "15m",
    description: "stop an iteration silent for this long, e.g. 30s, 5m, 1h30m"
  }),
  maxCost: valueOption({
    name: "max-cost",
    group: "guards",
    pseudo: "usd",
    example: "5",
    description: "stop (exit 4) once the agent has reported this much cost, in US dollars"
  }),
  maxTokens: valueOption({
    name: "max-tokens",
    group: "guards",
    pseudo: "n",
    example: "2000000",
    description: "stop (exit 4) once the agent has reported this many tokens"
  }),
  maxDuration: valueOption({
    name: "max-duration",
    group: "guards",
    pseudo: "duration",
    example: "8h",
    description: "stop (exit 4) once the run has lasted this long, e.g. 8h, 1d"
  }),
  stallIterations: valueOption({
    name: "stall-iterations",
    group: "guards",
    pseudo: "n",
    default: "5",
    description: "stop (exit 4) after this many iterations in a row without progress; 0: never"
  }),
  maxConsecutiveFailures: valueOption({
    name: "max-consecutive-failures",
    group: "guards",
    pseudo: "n",
    example: "5",
    description: "stop (exit 1) after this many failed iterations in a row (5 unless set); 0: never"
  }),
  maxLimitWait: valueOption({
    name: "max-limit-wait",
    group: "guards",
    pseudo: "duration",
    default: "6h",
    description: "wait this long at most for a usage limit to lift (up to 7d); 0: do not wait (exit 5)"
  }),
  sandbox: switchOption({
    name: "sandbox",
    group: "sandbox",
    description: "run every agent and check in a sandbox: writes to the work tree only, no secrets read, only the model's hosts reached"
  }),
  allowHost: valueOption({
    name: "allow-host",
    group: "sandbox",
    pseudo: "host",
    example: "registry.npmjs.org",
    repeatable: true,
    description: "with --sandbox: the agent and the checks may reach this host too (host or host:port); repeatable"
  }),
  denyRead: valueOption({
    name: "deny-read",
    group: "sandbox",
    pseudo: "path",
    example: "~/private",
    repeatable: true,
    description: "with --sandbox: nothing inside may read this path either; repeatable"
  }),
  passEnv: valueOption({
    name: "pass-env",
    group: "sandbox",
    pseudo: "name",
    example: "NPM_TOKEN",
    repeatable: true,
    description: "with --sandbox: pass this environment variable in too (NAME, or PREFIX_*); repeatable"
  }),
  notify: valueOption({
    name: "notify",
    group: "being told",
    pseudo: "command",
    example: "\"./notify.sh\"",
    repeatable: true,
    description: "a shell command told of each event (one JSON object on stdin); repeatable"
  }),
  webhook: valueOption({
    name: "webhook",
    group: "being told",
    pseudo: "url",
    example: "https://hooks.example.com/T000/B000/XXXX",
    repeatable: true,
    description: "POST each event to this URL as JSON (Slack, Mattermost and Discord show its text); repeatable; never printed"
  }),
  notifyOn: valueOption({
    name: "notify-on",
    group: "being told",
    pseudo: "events",
    example: "complete,failed",
    description: "the events to tell of, comma-separated; all but verify-failed unless set"
  }),
  serve: switchOption({
    name: "serve",
    group: "being told",
    description: "serve a live dashboard of every loop on 127.0.0.1 and print its URL; alone, or beside a loop or sweep"
  }),
  port: valueOption({
    name: "port",
    group: "being told",
    pseudo: "n",
    example: "4300",
    description: "with --serve: the port to listen on; a free one unless set"
  }),
  serveHost: valueOption({
    name: "serve-host",
    group: "being told",
    pseudo: "host",
    example: "0.0.0.0",
    description: "with --serve: listen on this address instead of 127.0.0.1 (needs --serve-token)"
  }),
  serveToken: valueOption({
    name: "serve-token",
    group: "being told",
    pseudo: "token",
    example: "\"$SPOOL_SERVE_TOKEN\"",
    description: "with --serve: every request must carry it (?token= or Authorization: Bearer)"
  }),
  noStream: switchOption({
    name: "no-stream",
    group: "output",
    description: "do not show the agent's output live (it is still logged)"
  })
}
