// Package rpc is node-to-node RPC of a Narad cluster (docs/architecture.md,
// "Node RPC"): a Server that exposes one Handler to the other nodes, and a
// Pool that calls them. Commit (produce dispatch and fan-out child
// commits), Forward (a client-API request replayed on the partition owner
// or the leader), Stats, ConfirmTopic (leader confirmation), Join,
// Heartbeat and Fetch (a replicated partition's follower pulling from its
// leader) are its calls.
//
// Two transports share the node port, behind the same peer handshake
// (a Server WithoutFramed serves gRPC alone). The data path's calls, Commit, Fetch and
// Forward, ride framed connections (framed.go) unless the Pool is told
// not to (CallFramed; a node's pool uses them only with
// cluster.framed_rpc): one length-prefixed protobuf frame each way per
// call, a connection per call in progress, at a quarter to 70% of a
// gRPC call's CPU. Every other call is gRPC, and so are these three to a
// node of a release before framed connections, or from a pool told not
// to use them (fetches then ride one FetchStream per partition,
// fetchstream.go, or calls to a node older still).
//
// It depends only on apierr, refusal, storage.Record and the peer
// handshake (peerauth); the broker, the metastore and fan-out plug in
// through Handler adapters and call out through Pool, so none of them
// imports gRPC.
//
// Invariants:
//
//   - No byte of a stranger reaches gRPC: Serve puts the cluster port's
//     handshake (package peerauth) in front of the listener and the Pool
//     dials through it, so every connection first proves both ends hold
//     the cluster's key (a peer with another secret gets a 503 naming the
//     handshake, and is counted on the server).
//   - No call is served without the cluster secret. A server interceptor
//     checks the "authorization: narad-secret <secret>" metadata of every
//     call, unary or stream, known method or not, before any handler runs,
//     and answers Unauthenticated; a framed connection presents the same
//     value's hash in its opening, before its first call, and is refused
//     (401 to the caller) with it. NewServer refuses an empty secret.
//   - Errors speak HTTP on the wire, so a forwarded request answers exactly
//     as a local one, and keep their type: every Pool method returns nil, a
//     *refusal.Error or an *apierr.Error. A handler's typed refusal comes
//     back as the same refusal (kind, message, Retry-After), so a remote
//     commit failure is classified exactly like a local one; its apierr
//     comes back equal (status, message, Retry-After); any other handler
//     error, or a panic, comes back as 500 "internal error" with the cause
//     logged on the serving node, as the local HTTP layer does. A node of
//     a release before kinds sends none: its refusals come back as apierr
//     values, which dispatch retries (records kept) rather than settles.
//     Failures around the handler map to: unreachable, deadline or
//     cancelled -> 503 with Retry-After 1 s; secret refused -> 401; method
//     unknown to the peer -> 501, which keeps mixed-version rolling
//     upgrades safe (a new call against an old node fails cleanly).
//   - A 503 from a call is not proof that it did nothing: a commit whose
//     deadline passed may still have committed. Callers retry, and the
//     cluster accepts the resulting duplicates (docs/architecture.md, "The
//     produce path").
//   - Timeouts: 5 s per call, Commit 30 s (a slow fsync is not a dead
//     node), Fetch its long-poll wait plus 5 s (a streamed or framed
//     fetch as a called one), Forward the caller's
//     ForwardRequest.Timeout (5 s plus a long-poll's wait for the data
//     plane, 75 s for a metadata write to the leader); a caller's earlier
//     deadline always wins. A framed call carries its budget to the
//     handler as a gRPC call carries its deadline. A caller that gives up
//     closes the connection: a commit's or a forwarded request's handler
//     is cancelled then, as a gRPC call's is (a forwarded consume must
//     not lease records for a client that left); a fetch ends by its
//     budget (a follower's fetch by its 500 ms wait).
//   - Messages up to MaxMessageBytes (64 MiB) either way, on both sides.
//   - Wire compatibility: fields of proto/node.proto are only ever added,
//     never renumbered or retyped; a new operation is a new rpc.
//
// Transport: mutual TLS when the cluster has certificates (docs/security.md;
// WithTLS on the server, NewTLSPool on the caller), so a peer without a
// certificate from the cluster CA never reaches the secret check (a framed
// connection runs TLS right after its opening, so its first call is inside
// TLS as a gRPC call is). Without
// them the plane is plaintext and the secret crosses the wire in clear,
// which the node warns about at start; TLS adds to the secret check and
// the handshake, it replaces neither.
//
// The generated code in proto/ is committed, so building needs nothing but
// Go. Regenerating it (go generate ./internal/rpc) needs protoc and the two
// plugins on PATH: protoc-gen-go (google.golang.org/protobuf/cmd/
// protoc-gen-go, v1.36.12 to match go.mod) and protoc-gen-go-grpc
// (google.golang.org/grpc/cmd/protoc-gen-go-grpc, v1.6.x, whose output
// needs grpc >= 1.64).
package rpc
