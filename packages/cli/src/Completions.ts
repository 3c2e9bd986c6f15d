import type { Shell } from "./CommandLine.js"
import { bashScript } from "./completions/Bash.js"
import { fishScript } from "./completions/Fish.js"
import { zshScript } from "./completions/Zsh.js"

/**
 * `spool --completions <shell>`: the completion script for the shell, written from the option table
 * (`completions/Offers.ts`), offering what `CommandLine` reads and no more. Ends with a newline.
 */
export const completionScript = (shell: Shell): string =>
  shell === "bash" ? bashScript() : shell === "zsh" ? zshScript() : fishScript()
