// Surviving mutants that change no behaviour, where a `// Stryker disable` comment would also hide
// mutants of the same line that do: each names its file, mutator and replacement (as the report
// shows it), a piece of the mutated line, and why it is equivalent. `pnpm mutate` leaves them out of
// the score and lists them in MUTATION.md; an entry that no longer matches a survivor is reported.
export const equivalents = []
