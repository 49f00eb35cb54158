// Package console is the built-in web console (docs/architecture.md,
// "Packages and layers"): static assets embedded in the binary (go:embed,
// no build step outside go build; plain ES modules, no third-party code)
// served at /console/ on every node's HTTP listener beside the API, with
// GET / redirecting there.
//
// Invariant: the console adds no route that reaches the node's data or
// state. Its handler serves only the embedded files (GET and HEAD) and two
// redirects, and hands every other request to the API unchanged; the
// pages talk only to the public /v1 API, with the viewer's own
// credentials (HTTP Basic, kept in the browser's sessionStorage), so the
// console can do nothing its user could not do with curl. Every console
// answer carries a strict Content-Security-Policy (scripts and styles from
// the console's own files only: no inline script, no eval; connections to
// this origin only), X-Frame-Options DENY and nosniff.
package console
