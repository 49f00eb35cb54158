// Package client is the Go client of Narad's HTTP /v1 API. It owns the wire
// contract from the caller's side: request paths and bodies, the JSON types
// the server answers with, and the mapping of non-2xx answers to *APIError.
// The CLI, the end-to-end tests and `narad bench` all talk to the broker
// through it, so it stays small and has no dependency beyond the standard
// library.
//
// Where the contract leaves a detail open (how a timestamp or a child topic
// is spelled), the types here accept every reasonable spelling rather than
// failing a whole response over one field.
package client
