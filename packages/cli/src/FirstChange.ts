/** How to start a first change, for messages that find none. */
export const firstChangeHint =
  "start one with: mkdir -p .spool/changes/001-01_my-change && echo '# My change' > .spool/changes/001-01_my-change/proposal.md"
