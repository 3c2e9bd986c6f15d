import { Error as PlatformError } from "@effect/platform"

/** An error of a child process, as the platform's command executor reports it. */
export const systemError = (method: string, description: string) =>
  new PlatformError.SystemError({ module: "Command", method, reason: "Unknown", description })
