// The exercise page's editor: CodeMirror 6 with Go, bundled by esbuild into
// one file (web/static/editor.js). It exposes window.ctrljudgeEditor.create;
// app.js owns the page and calls it. Colours come from CSS classes (tok-*,
// cm-*) so the page's light and dark themes apply without a second theme here.
import {EditorState, Compartment} from "@codemirror/state";
import {
  EditorView, keymap, lineNumbers, highlightActiveLine, highlightActiveLineGutter,
  drawSelection, highlightSpecialChars, rectangularSelection, dropCursor,
} from "@codemirror/view";
import {defaultKeymap, history, historyKeymap, indentWithTab} from "@codemirror/commands";
import {
  bracketMatching, indentOnInput, foldGutter, foldKeymap, syntaxHighlighting,
} from "@codemirror/language";
import {classHighlighter} from "@lezer/highlight";
import {closeBrackets, closeBracketsKeymap} from "@codemirror/autocomplete";
import {searchKeymap, highlightSelectionMatches} from "@codemirror/search";
import {lintGutter, setDiagnostics} from "@codemirror/lint";
import {go} from "@codemirror/lang-go";

// create builds an editor inside parent. opts: doc, label, stylesheet,
// onRun, onSubmit, onChange(code), onEscape.
//
// The editor lives in a shadow root: there CodeMirror's own styles go into
// a constructed stylesheet, which the page's CSP (styles from 'self' only)
// allows, where a <style> element in the document would be refused. The
// page's editor stylesheet is linked inside the root; colours arrive as
// inherited CSS variables.
function create(host, opts) {
  const root = host.attachShadow({mode: "open"});
  if (opts.stylesheet) {
    const link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = opts.stylesheet;
    root.appendChild(link);
  }
  const parent = document.createElement("div");
  parent.className = "cj-editor";
  root.appendChild(parent);
  const readOnly = new Compartment();
  const run = (fn) => () => { if (fn) fn(); return true; };
  const view = new EditorView({
    parent,
    root,
    state: EditorState.create({
      doc: opts.doc || "",
      extensions: [
        lineNumbers(), highlightActiveLineGutter(), foldGutter(), lintGutter(),
        highlightSpecialChars(), history(), drawSelection(), dropCursor(),
        EditorState.allowMultipleSelections.of(true), indentOnInput(),
        syntaxHighlighting(classHighlighter), bracketMatching(), closeBrackets(),
        rectangularSelection(), highlightActiveLine(), highlightSelectionMatches(),
        EditorState.tabSize.of(4), go(), readOnly.of(EditorState.readOnly.of(false)),
        keymap.of([
          {key: "Mod-Enter", run: run(opts.onRun), preventDefault: true},
          {key: "Mod-Shift-Enter", run: run(opts.onSubmit), preventDefault: true},
          ...closeBracketsKeymap, ...searchKeymap, ...historyKeymap, ...foldKeymap,
          ...defaultKeymap, indentWithTab,
          // Last, so that closing the search panel or a completion wins.
          {key: "Escape", run: () => { if (opts.onEscape) { opts.onEscape(); return true; } return false; }},
        ]),
        EditorView.contentAttributes.of({"aria-label": opts.label || "Code editor"}),
        EditorView.updateListener.of((u) => {
          if (u.docChanged && opts.onChange) opts.onChange(u.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    view,
    getCode: () => view.state.doc.toString(),
    setCode(code) {
      view.dispatch({changes: {from: 0, to: view.state.doc.length, insert: code}});
    },
    focus: () => view.focus(),
    // markDiagnostics shows compiler messages ({line, column, message}) at
    // the learner's lines; an empty list clears them.
    markDiagnostics(list) {
      const doc = view.state.doc;
      const out = [];
      for (const d of list || []) {
        if (!d.line || d.line < 1 || d.line > doc.lines) continue;
        const line = doc.line(d.line);
        const from = Math.min(line.from + Math.max((d.column || 1) - 1, 0), line.to);
        out.push({from, to: Math.max(from, line.to), severity: "error", message: d.message});
      }
      view.dispatch(setDiagnostics(view.state, out));
    },
    setReadOnly(on) {
      view.dispatch({effects: readOnly.reconfigure(EditorState.readOnly.of(!!on))});
    },
  };
}

window.ctrljudgeEditor = {create};
