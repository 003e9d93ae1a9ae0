// Builds ../static/editor.js: editor.js and CodeMirror bundled into one
// minified file, headed by the MIT licence its parts ship under (every
// bundled package is Marijn Haverbeke's, MIT). `npm run build` runs this.
import {build} from "esbuild";
import {readFileSync} from "node:fs";

const license = readFileSync("node_modules/@codemirror/view/LICENSE", "utf8").trim();
await build({
  entryPoints: ["editor.js"],
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2020",
  legalComments: "none",
  outfile: "../static/editor.js",
  banner: {
    js: "/*! ctrljudge editor: CodeMirror 6 with Lezer, style-mod, crelt, w3c-keyname and\n" +
      "find-cluster-break, bundled by esbuild (web/assets). Their licence:\n\n" + license + "\n*/",
  },
  logLevel: "info",
});
