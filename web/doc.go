// Package web serves the browser side of the judge: chapter and exercise
// pages, the editor, drafts, and live verdicts.
//
// Design notes:
//
//   - Pages are rendered on the server with html/template. Markdown (chapters,
//     statements, explanations) is rendered once at start by goldmark with raw
//     HTML off and kept; chroma's CSS is written once at start too.
//   - Judging is package judge/queue's: it admits a bounded line of
//     submissions (per learner and per client address too), judges them in
//     this process or through River on PostgreSQL, and publishes each
//     one's events. This package asks it for a place, answers 429 or 503
//     when it refuses, and charges the sender's rate for attempts a safety
//     net cut short.
//   - Progress travels as server-sent events. Each live job keeps its event
//     log, so a late or reconnecting subscriber replays it (Last-Event-ID
//     skips what it has); once a job is gone from memory the stored verdict
//     is replayed instead. Result cards and the timeline SVG are rendered
//     here as the events are sent, so all learner-visible text goes
//     through html/template.
//   - CSRF: echo's CSRF middleware. Browsers that send Sec-Fetch-Site are
//     judged by it (same-origin passes, cross-site is refused); requests
//     without it must carry the double-submit token (header X-CSRF-Token or
//     form field _csrf). That covers old browsers and refuses token-less
//     scripts, which the Go 1.25 cross-origin check would let through.
//   - The content security policy allows only our own scripts and styles;
//     page data reaches scripts through a JSON <script> block. CodeMirror
//     writes its styles into a <style> element, which that policy refuses,
//     so the editor lives in a shadow root, where its styles become a
//     constructed stylesheet; our colours reach it as CSS variables.
//   - The editor bundle (static/editor.js) is built from web/assets with
//     npm and esbuild and committed, so running the server needs no npm.
//   - A learner is whoever holds the session cookie; one without a cookie gets
//     an anonymous learner on the first state-changing request (a draft, a submission),
//     and may sign in to a class with a name and a join code. The instructor
//     pages (package instructor) are mounted under /instructor, and their
//     re-judges go through the same queue.
package web
