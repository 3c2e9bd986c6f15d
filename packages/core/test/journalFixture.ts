import type { JournalEntry } from "../src/state/JournalEntry.js"

/** A failed iteration's journal entry, with the given fields changed. */
export const sampleEntry = (overrides: Partial<JournalEntry> = {}): JournalEntry => ({
  timestamp: "2026-11-22T02:30:00.000Z",
  run: "20261122T023000Z-abcd",
  iteration: 2,
  exitCode: 1,
  signal: null,
  timedOut: false,
  error: null,
  taskId: "1.2",
  taskDescription: "Add the entry point",
  stderr: "TypeError: boom\n",
  stdout: "running tests\n1 failed\n",
  ...overrides
})
