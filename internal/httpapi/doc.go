// Package httpapi is the client API of 02-http-api.md on net/http's
// method-pattern ServeMux: parsing and validating every parameter and body,
// authentication, the payload encoding rules, JSON errors and status codes.
// It holds no state of its own — the data plane does the work — but a
// short memory of owners that did not answer a forward (suspects), which
// only orders an unpinned consume's attempts.
//
// Seams (seams.go): it reaches the data plane, fan-out, users and the
// cluster only through interfaces it declares itself (DataPlane, Children,
// UserAdmin, Cluster, ClusterAdmin, Authenticator), with value types of
// broker, fanout and meta crossing them, so its handlers are tested
// against fakes. It is where refusals get their HTTP status: apierr values
// as they are, typed refusals (package refusal) through apierr.From.
//
// Routing: a consume, ack or replay about a partition another node owns is
// forwarded there within 5 s plus the long-poll's wait, and an owner that
// does not answer in time is a 503 with Retry-After — never a connection
// closed with no answer by the HTTP write timeout.
//
// The document: openapi.json is the OpenAPI 3.1 description of every
// route here, embedded and served at GET /v1/openapi.json without
// credentials (it is the API's shape, the same on every node, and holds
// nothing of the node's). Its tests hold it to the server: the route
// table, the query parameters each route accepts (asked of the routes
// themselves), the statuses of 02-http-api.md, and every answer the
// package's tests see (status, and JSON body against its schema).
//
// Invariants: a malformed request gets 400 and changes nothing; unknown
// JSON fields are refused; bodies over their cap are refused with 413
// without being read whole; every error body is {"error": "<sentence>"};
// /readyz says ready only when a client could use the node, so with
// security on not before the root admin is in its replica; a topic's
// owner is checked by user identity (name and ID), never by name alone.
package httpapi
