package replica

import (
	"errors"
	"fmt"
)

// The engine's refusals. The wiring maps them onto its wire and statuses
// (a produce that meets ErrNotReady or ErrDeposed is told to retry at the
// partition's leader; a fetch that meets ErrStaleEpoch waits for its
// metastore replica to learn the current placement).
var (
	// ErrStaleEpoch: the fetch names another leader epoch than the one the
	// refuser serves (either side may be behind). An *EpochError says
	// which.
	ErrStaleEpoch = errors.New("replica: stale leader epoch")
	// ErrNotReady: this leader's EpochStart is not in its metastore
	// replica yet, or it waits for the next epoch (its node began this
	// one before a restart); it writes and serves nothing until then.
	// Temporary.
	ErrNotReady = errors.New("replica: leader not ready (its epoch start is not recorded yet)")
	// ErrDeposed: the leadership this Leader held has ended (another
	// leader or epoch in the view, or Close); nothing more commits here.
	ErrDeposed = errors.New("replica: no longer the partition's leader")
	// ErrNotReplica: the fetching node is not one of the partition's
	// replicas (or is the leader itself).
	ErrNotReplica = errors.New("replica: node is not a follower of this partition")
	// ErrOffsetAhead: a follower fetched past what the leader has written,
	// in the leader's own epoch. A follower holds only records the leader
	// gave it, so the leader lost records: it stops writing (ErrStateLost).
	ErrOffsetAhead = errors.New("replica: fetch offset past the leader's end")
	// ErrStateLost: this replica's log or replica.state is behind what it
	// recorded in the metastore itself (its EpochStart is past its end, or
	// its start is recorded while its replica.state never saw the epoch):
	// the disk was replaced or wiped. It must not lead; it waits for
	// another leader and then catches up as a follower.
	ErrStateLost = errors.New("replica: replica state lost (disk replaced?), refusing to lead")
	// ErrWrongPartition: the request names another partition or topic
	// incarnation than the one this Leader serves.
	ErrWrongPartition = errors.New("replica: request for another partition")
)

// EpochError is ErrStaleEpoch with both epochs: Have is the refuser's,
// Asked the request's.
type EpochError struct {
	Have, Asked uint64
}

func (e *EpochError) Error() string {
	if e.Asked < e.Have {
		return fmt.Sprintf("replica: fetch at leader epoch %d, current is %d (the follower is behind)", e.Asked, e.Have)
	}
	return fmt.Sprintf("replica: fetch at leader epoch %d, this leader serves %d (it is deposed or behind)", e.Asked, e.Have)
}

// Is makes errors.Is(err, ErrStaleEpoch) hold.
func (e *EpochError) Is(target error) bool { return target == ErrStaleEpoch }

// RequesterBehind reports whether the request's epoch is the older one.
func (e *EpochError) RequesterBehind() bool { return e.Asked < e.Have }
