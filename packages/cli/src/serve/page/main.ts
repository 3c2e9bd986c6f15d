/** The script served as `/app.js`: `build.mjs` bundles it from here, as one function run at once. */
import { startPage } from "./app.js"

startPage()
