// Package cluster is membership and the controller: joining (a node not
// among the initial members walks its peers every 2 s until the leader
// admits it), heartbeats (every 500 ms, to the leader, which answers
// each only once a quorum confirmed it still leads, notes each in memory
// and writes it into the member record at most every 5 s), dead
// marking by the controller (no recorded heartbeat for 30 s, counted from
// the later of the last heartbeat and this leader's first tick), the
// node's lease (Fenced: no heartbeat answered for 1.5 s), leader election
// for replicated partitions (looked for every 250 ms: a leader silent for
// 2.5 s, counted the same way, or one outside its in-sync set after
// losing its disk, gives way to an in-sync replica heard from within
// 2.5 s; so does a leader heard but reported unreachable by a majority
// of its copies for 2.5 s, unreachable.go) and the
// reconcile of their replicas to the topic's replication factor, the
// decommission of their copies (drain.go: a replacement joins and catches
// up before a draining copy leaves, and a draining leader hands over to an
// in-sync copy first), the rebalance of their copies over the receivers
// by the same steps (rebalance.go), the re-creation by them of a copy on
// a node silent past HealAfter (heal.go) and the spread of their leaderships
// (leaders.go) — one tick of that copy work is copies.go — and
// partition assignment — one
// function, Assign, decides placement for every path (Placement is the
// broker's): round robin over live members, anti-affinity for a child
// created with its parent, and deferral (never a guess) while the parent
// partition is unplaced. Directory reads where members are and whether
// they live; Rerouter is produce dispatch's reroute policy over it.
//
// Every rule of time reads the Node's clock.Clock, so tests step a fake
// one. Node RPC is reached only through the package's own Transport.
//
// Invariants:
//   - assignments are sticky. A dead node's single-copy partitions are
//     never reassigned here (its disk holds the only copy); they wait for
//     it, and a decommission of it reports them as blocked instead
//     (blocked.go) rather than declaring them lost. The exception is a replicated partition: its leader changes
//     (ElectLeader) to an in-sync replica, which holds every acknowledged
//     record; its replicas change only by the replication factor, by a
//     decommission, by a rebalance and by a heal. A copy leaves (drain.go) only
//     once its replacement joined and every copy that stays is in sync,
//     never leaving fewer in-sync copies than a majority of the copies
//     that stay, nor fewer copies than the factor (a decommission waits
//     for a node to take one instead — only at five copies, the most a
//     placement lists, is one fewer for a tick; a rebalance's move is
//     called off).
//   - a rebalance's or a heal's leaving copy is marked in the metastore
//     (meta.Assignment.Leaving) by the command that adds its
//     replacement, so a partition with one copy more than its factor is
//     a move in flight (finished by whichever controller comes next; the
//     factor reconcile leaves it alone) or a lowered factor (the
//     reconcile drops the surplus, out-of-sync copies first), never
//     taken for the other. A rebalance moves a copy from a receiver
//     holding at least two more than another, and an election for balance
//     goes from a node leading at least two more than another copy's node:
//     each strictly lowers a sum of squares, so neither undoes itself.
//     Both touch only partitions fully in sync with every copy on a
//     receiver heard from; at most MaxReplicaMovesInFlight moves and
//     LeaderMovesPerTick balance elections a tick.
//   - a heal moves a follower's copy off a member this controller has
//     not heard from for longer than HealAfter, counted from no earlier
//     than its own first turn as leader (a new controller never heals at
//     once), onto a receiver heard from, only on a partition holding
//     exactly its factor; heals and rebalance moves together mark at
//     most MaxReplicaMovesInFlight partitions. A heal is not called off
//     while its copy's node stays silent; such a node receives no copy.
//   - FenceAfter < FailoverAfter (checked at compile time for the
//     constants, and by Timings.Check for a node's Timings, timings.go,
//     which cluster.network may lengthen): a leader cut
//     off from the metastore leader has stopped serving before another
//     is elected in its place. Across a metastore leader change too: a
//     heartbeat is answered only after a quorum confirmed the answering
//     leader, and a new controller counts silence from its first turn as
//     leader, which follows its election.
//   - a leader still heard gives way only once copies that together are
//     a majority of the partition's copies (the leader never among them)
//     each reported, in a heartbeat of this term within FenceAfter, that
//     their fetches have not reached it at its current epoch for
//     FailoverAfter; then it cannot commit, for a commit needs a
//     majority, and a leader a majority still reaches is never deposed
//     this way. The new leader is an in-sync copy among the reporters,
//     heard from, and such a hand-off of a partition waits FailoverAfter
//     after this controller's last election of it.
//   - a member that announces another disk than the one recorded (its data
//     directory was wiped) is counted as heard only once the metastore
//     records the new disk and, in the same command, holds none of its old
//     copies in sync (meta.ReplaceDisk); a partition it led is given to an
//     in-sync member at the next tick. An election picks only a member
//     whose latest heartbeat named its recorded disk, and a node is fenced
//     while its own metastore replica records another disk than its own.
package cluster
