// Package httpapi is the client API of docs/http-api.md on net/http's
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
// closed with no answer by the HTTP write timeout. A replay since a time
// across partitions (replaysince.go) reads each partition on its owner and
// merges the pages on the node asked, in commit-time order; its page token
// (replaytoken.go) is opaque, versioned and bound to the topic's
// incarnation.
//
// The document: openapi.json is the OpenAPI 3.1 description of every
// route here, embedded and served at GET /v1/openapi.json without
// credentials (it is the API's shape, the same on every node, and holds
// nothing of the node's). Its tests hold it to the server: the route
// table, the query parameters each route accepts (asked of the routes
// themselves), the statuses of docs/http-api.md, and every answer the
// package's tests see (status, and JSON body against its schema).
//
// The edge (edge.go): a path that is not canonical is 400, never a
// redirect; a path no route serves is a JSON 404, a method a path does
// not take a JSON 405 with Allow, in /v1 and outside; a query parameter
// given twice, or a query that does not parse, is 400; an error answer
// first drains (reads and discards, bounded in bytes and time) what is
// left of the request body, so a client that sends its whole body before
// reading hears the answer instead of a connection reset. The same rules
// hold over HTTP/2 without TLS (a node's http.h2c), where the stream, not
// the connection, is reset.
//
// What a request costs at the edge (exchange.go, body.go, metrics.go):
// one exchange per request, never reused (a handler's goroutine may keep
// its context past the answer), carries the status recorder, the tracked
// body and the authenticated caller; the request metrics' series are
// bound once per route, method and status; a single produce's body is
// read into a pooled buffer, which is why DataPlane.Produce may keep
// nothing of a record once it returns.
//
// Batch bodies (batch_body.go) are JSON, NDJSON or the binary format of
// batch_binary.go, by Content-Type (another is 415); the JSON ones are
// read by a one-pass scanner (batch_scan.go) that refuses exactly what
// encoding/json plus checkKeys refused, in the same words and order — a
// differential fuzz test holds it to that path, kept as its oracle — and
// allocates for at most 10,000 records whatever the body holds.
//
// Payloads (payload.go) come back byte for byte: a JSON payload is
// embedded with its own bytes, text is a JSON string flagged "text",
// other bytes base64 flagged "base64"; a key that is not UTF-8 is
// key_base64.
//
// Invariants: a malformed request gets 400 and changes nothing; unknown
// JSON fields are refused, and so are field names in another case and
// keys given twice (outside a client's own payload); bodies over their
// cap are refused with 413 without being read whole, and the client gets
// that 413; every error body is {"error": "<sentence>"} naming no Go
// package;
// a request over its user's rate limit (limits.go) is 429 with
// Retry-After before its body is read or anything is stored, counted
// once, at the node the client reached (a forwarded request never
// again), and an unlimited one pays no lookup and no lock;
// /readyz says ready only when a client could use the node, so with
// security on not before the root admin is in its replica; a topic's
// owner is checked by user identity (name and ID), never by name alone.
package httpapi
