// Package client is the Go client of Narad's HTTP /v1 API. It owns the wire
// contract from the caller's side: request paths and bodies, the JSON types
// the server answers with, and the mapping of non-2xx answers to *APIError.
// The CLI, the end-to-end tests and `narad bench` all talk to the broker
// through it, so it stays small and has no dependency beyond the standard
// library.
//
// Where the contract leaves a detail open (how a timestamp or a child topic
// is spelled), the types here accept every reasonable spelling rather than
// failing a whole response over one field; Raw keeps the server's own
// bytes of a topic or child, so tools printing JSON print the API's JSON.
//
// A Client retries nothing unless given a RetryPolicy (WithRetry): then a
// call is repeated, for a bounded time and honouring Retry-After, when no
// connection could be made, on 503 and 429, and after a lost answer only
// for calls safe to repeat — produce among them, so with a policy produce
// is at least once (see RetryPolicy). Backoff is the one pause schedule of
// every retry loop here and in the CLI.
package client
