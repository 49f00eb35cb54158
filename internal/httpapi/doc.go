// Package httpapi is the client API of 02-http-api.md on net/http's
// method-pattern ServeMux: parsing and validating every parameter and body,
// authentication, the payload encoding rules, JSON errors and status codes.
// It holds no state of its own; the broker does the work.
//
// Invariants: a malformed request gets 400 and changes nothing; unknown
// JSON fields are refused; bodies over their cap are refused with 413
// without being read whole; every error body is {"error": "<sentence>"};
// /readyz says ready only when a client could use the node, so with
// security on not before the root admin is in its replica; a topic's
// owner is checked by user identity (name and ID), never by name alone.
package httpapi
