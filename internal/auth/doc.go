// Package auth authenticates API requests. For now it holds the root admin
// only (07-security.md's users, grants and ownership are a later issue):
// its bcrypt hash lives in memory and verified credentials are cached by a
// hash of the pair, so bcrypt is not paid per request.
//
// Invariant: a password is never stored or logged in clear; a wrong pair is
// never cached.
package auth
