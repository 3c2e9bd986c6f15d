// The dashboard's script (src/serve/page/) as one browser script: an IIFE with nothing from
// elsewhere, given to the server's code as the constant SPOOL_PAGE_SCRIPT (see PageScript.ts), by
// build.mjs for the bundles and by vitest.config.ts for the tests that run the source.
import { build } from "esbuild"
import { fileURLToPath } from "node:url"

export const bundlePage = async () => {
  const result = await build({
    entryPoints: [fileURLToPath(new URL("src/serve/page/main.ts", import.meta.url))],
    bundle: true,
    platform: "browser",
    format: "iife",
    target: "es2020",
    minify: true,
    legalComments: "none",
    write: false,
    logLevel: "warning"
  })
  return result.outputFiles[0].text
}

/** esbuild's and vite's `define`: the page's script as the constant the server serves. */
export const pageDefine = async () => ({ SPOOL_PAGE_SCRIPT: JSON.stringify(await bundlePage()) })
