export * as SandboxRuntime from "./SandboxRuntime.js"
