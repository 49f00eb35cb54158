// Package refusal names the data plane's refusals that other packages act
// on: a topic that is not here, a partition out of range, a partition
// frozen for a move or owned by another node, a topic incarnation this
// node does not hold, a full disk, a fenced log. The broker returns them,
// node RPC carries them, dispatch decides discard and reroute on them, and
// the client API writes them — each by its Kind, with errors.Is, never by
// an HTTP status. Beside those, general kinds (invalid, not found,
// conflict, unavailable, too large, gone) let every package below the
// edges — the broker's request checks, fan-out's link rules, a move's
// source — refuse with a sentence without choosing an HTTP status or a
// gRPC code itself. A refusal of one record of a batch names it
// (WithIndex).
//
// Invariants:
//
//   - A refusal carries the sentence a client sees (naming no path of the
//     server's disk) and, when it is temporary, when to come back; it
//     carries no status code. HTTP statuses are chosen at the edges only
//     (package apierr's From, used by the client API and by node RPC,
//     whose gRPC code follows from that status), one table for every
//     kind.
//   - A Kind's name is its wire form (node RPC): names are only ever
//     added, never changed or reused, so a peer of another version either
//     knows a kind exactly or not at all.
//   - errors.Is(err, ErrTopicNotFound) holds for every refusal whose
//     records can never land in the topic they were meant for (the topic
//     is absent here, or the incarnation they belong to was deleted).
//
// It imports nothing of ours: every package may use it.
package refusal
