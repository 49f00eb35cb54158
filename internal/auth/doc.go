// Package auth decides who a request is and what it may do
// (docs/security.md): HTTP Basic credentials checked against the bcrypt
// hashes of the users in the metastore, AWS Signature Version 4 checked
// against the users' access keys (sigv4.go, accesskeys.go), and grants (an action on topic-name
// patterns) plus topic ownership checked per request.
//
// Invariants: a password is never stored, cached or logged in clear — the
// credential cache is keyed by a SHA-256 of the pair and holds only pairs
// that verified; a cached pair stops working as soon as its user's record
// changes or the user is deleted (the cache is checked against the user's
// record version on every users-domain change); a user can never grant
// more than it holds; a topic's owner is a user's incarnation (name and
// ID), so a re-created name owns nothing of the deleted user's; a
// password is checked whole (all of its up to 256 bytes count, see
// password.go), and an unknown name costs the same bcrypt as a wrong
// password; failed logins during start-up, while this node cannot check
// credentials yet, do not slow their source. An access key's secret is
// sealed (AES-256-GCM, its key ID the associated data) by the node that
// creates it, before the command is proposed: the Raft log, snapshots and
// the user's record hold it only sealed, it is shown once on creation and
// never logged, and unsealed secrets live only in the KeyRing's memory,
// dropped when their user's record changes. Both Basic auth and a
// signature give a user the same Principal.
package auth
