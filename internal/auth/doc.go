// Package auth decides who a request is and what it may do
// (07-security.md): HTTP Basic credentials checked against the bcrypt
// hashes of the users in the metastore, and grants (an action on topic-name
// patterns) plus topic ownership checked per request.
//
// Invariants: a password is never stored, cached or logged in clear — the
// credential cache is keyed by a SHA-256 of the pair and holds only pairs
// that verified; a cached pair stops working as soon as its user's record
// changes or the user is deleted (the cache is checked against the user's
// record version on every users-domain change); a user can never grant
// more than it holds.
package auth
