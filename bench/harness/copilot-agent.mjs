#!/usr/bin/env node
// The fake copilot of the streaming benchmark: see jsonAgent.mjs; SPOOL_BENCH_BYTES says how much it prints.
import { runAgent } from "./jsonAgent.mjs"
await runAgent("copilot", Number(process.env.SPOOL_BENCH_BYTES ?? 1024 ** 3))
