// Package clustertls builds the mutual TLS of the cluster plane
// (docs/security.md, "Mutual TLS between nodes"): Raft and node RPC both
// present this node's certificate and accept only peers whose certificate
// chains to the cluster CA.
//
// Invariant: with TLS configured, no cluster connection is made or
// accepted without a verified certificate on both ends (TLS 1.2 or later);
// without it, the caller logs loudly that the cluster plane is plaintext.
package clustertls
