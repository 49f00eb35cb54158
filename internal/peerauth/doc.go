// Package peerauth authenticates every connection on the cluster ports:
// the Raft port and the node-RPC port both accept and dial through it, so
// no byte of a stranger ever reaches hashicorp/raft's decoder or gRPC's
// HTTP/2 parser.
//
// # The invariant
//
// A connection is handed to the protocol above (Raft, gRPC) only after
// both ends proved they hold the cluster's key. Every connection, in both
// directions, runs a challenge–response first: each side sends a fresh
// random nonce and proves knowledge of the key with an HMAC-SHA-256 over
// both nonces and its role, so a recorded handshake cannot be replayed and
// a dialer's proof cannot be reflected back as a listener's. With mutual
// TLS configured, the handshake runs inside the TLS session, after both
// certificates were verified.
//
// A connection that fails (wrong greeting, wrong proof, too slow, too many
// handshakes pending) is closed without an answer, counted by reason, and
// logged at most once per interval with the number suppressed, so a flood
// of strangers can neither fill the log nor reach the protocol.
//
// Accepting never waits on a stranger: handshakes run beside the accept
// loop, a bounded number at a time, each under a deadline.
//
// The key is derived from the cluster secret with a per-plane label, so
// the Raft port's key and the node-RPC port's key differ and neither is
// the raw secret. A node with no secret uses a random key of its own: it
// accepts no peer at all, which is right for a node with no peers.
//
// This is authentication, not confidentiality: without TLS the traffic
// after the handshake is plaintext, as the node's start-up warning says.
package peerauth
