// Package duration is the one duration syntax of Narad, shared by the
// configuration, the HTTP API's query parameters and the CLI's flags, so a
// value means the same wherever it is written.
//
// Invariant: Parse accepts exactly Go's time.ParseDuration syntax plus a
// "d" unit of 24 hours (fractions included, "1.5d"), and nothing else: no
// bare numbers but "0", no surrounding space (callers that read hand-typed
// text trim it first; the API does not), no overflow (refused, never
// wrapped). ParseMillis also reads a bare integer as milliseconds, for the
// settings and parameters whose name or contract promises milliseconds.
// Format prints what Parse reads back to the same value.
//
// It imports nothing of ours: every package may use it.
package duration
