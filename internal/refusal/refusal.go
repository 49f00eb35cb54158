package refusal

import (
	"errors"
	"fmt"
	"time"
)

// Kind is one class of refusal. It is an error so that errors.Is(err,
// refusal.ErrFrozen) reads as it means; its text is its wire name.
type Kind string

func (k Kind) Error() string { return string(k) }

// Is makes a deleted incarnation a topic that is not here: the records of
// either can never commit where they were meant to.
func (k Kind) Is(target error) bool {
	return k == ErrIncarnationGone && target == ErrTopicNotFound
}

// The kinds. Their names travel between nodes: add, never rename.
const (
	// ErrTopicNotFound: the topic does not exist on this node (or is a
	// remote child, which has no partitions here).
	ErrTopicNotFound Kind = "topic_not_found"
	// ErrIncarnationGone: the records belong to an incarnation of the
	// topic that was deleted (the name now holds a later one).
	ErrIncarnationGone Kind = "incarnation_gone"
	// ErrIncarnationAhead: the records belong to an incarnation this
	// node's metastore replica does not know yet. Temporary.
	ErrIncarnationAhead Kind = "incarnation_ahead"
	// ErrPartitionRange: the topic has no such partition.
	ErrPartitionRange Kind = "partition_out_of_range"
	// ErrFrozen: the partition is frozen for a move; its commits go to
	// the new owner after the flip. Temporary.
	ErrFrozen Kind = "frozen"
	// ErrNotOwner: this node does not serve the partition. Temporary.
	ErrNotOwner Kind = "not_owner"
	// ErrDiskFull: the disk this would be written to is full. Temporary.
	ErrDiskFull Kind = "disk_full"
	// ErrFenced: the log that would take the write is fenced after an
	// I/O error, until it recovers. Temporary.
	ErrFenced Kind = "fenced"
	// ErrStaleEpoch: a replicated partition's fetch or commit names a
	// leader epoch other than the one the serving node knows (package
	// replica). Temporary: one side learns the new epoch shortly.
	ErrStaleEpoch Kind = "stale_epoch"
	// ErrNotLeader: this node holds a replica of the partition but does
	// not lead it at the epoch asked for. Temporary.
	ErrNotLeader Kind = "not_leader"
	// ErrNotReady: this node leads the replicated partition but may not
	// serve it yet or any more (its epoch start is not in the metastore,
	// its lease lapsed, or the in-sync set is below a majority).
	// Temporary. A commit refused not_ready was refused before anything
	// was written, so it may be sent again as it was; a refusal after the
	// write (the copies did not confirm in time) is ErrUnavailable.
	ErrNotReady Kind = "not_ready"

	// The general refusals of packages below the edges (fan-out's link
	// rules, a move's source and destination): what a client or a peer
	// must change, or wait for, said without choosing a status.

	// ErrInvalid: the request is malformed or invalid in itself; only a
	// different request can succeed.
	ErrInvalid Kind = "invalid"
	// ErrNotFound: something the request names, other than a topic
	// (ErrTopicNotFound), is not here: a link, a partition's file.
	ErrNotFound Kind = "not_found"
	// ErrConflict: the request conflicts with another resource's state
	// (a link that exists, an owner that changed).
	ErrConflict Kind = "conflict"
	// ErrUnavailable: the request cannot be answered now (no owner or no
	// leader known yet, a peer that cannot be asked). Temporary.
	ErrUnavailable Kind = "unavailable"
	// ErrTooLarge: the request or one of its records is over a size cap.
	ErrTooLarge Kind = "too_large"
	// ErrGone: what the request names has ended for good (a lease that
	// was settled, lapsed or superseded).
	ErrGone Kind = "gone"
	// ErrForbidden: the caller's grants do not allow the request.
	ErrForbidden Kind = "forbidden"
)

// Kinds lists every kind, for the edges' mapping tests.
func Kinds() []Kind {
	return []Kind{ErrTopicNotFound, ErrIncarnationGone, ErrIncarnationAhead, ErrPartitionRange,
		ErrFrozen, ErrNotOwner, ErrDiskFull, ErrFenced, ErrStaleEpoch, ErrNotLeader, ErrNotReady,
		ErrInvalid, ErrNotFound, ErrConflict, ErrUnavailable, ErrTooLarge, ErrGone, ErrForbidden}
}

// ParseKind returns the kind named name, as a peer sent it; false for a
// name this version does not know (a newer peer's).
func ParseKind(name string) (Kind, bool) {
	for _, k := range Kinds() {
		if string(k) == name {
			return k, true
		}
	}
	return "", false
}

// Error is a refusal: its Kind, the sentence a client sees, and for a
// temporary one when to try again.
type Error struct {
	Kind       Kind
	Message    string
	RetryAfter time.Duration // 0: not said (the edge picks its default)
	// Index is the batch record refused, when the request was a batch
	// (WithIndex); nil otherwise.
	Index *int
}

func (e *Error) Error() string { return e.Message }

// Unwrap exposes the Kind, so errors.Is(err, refusal.ErrX) finds it
// through any wrapping.
func (e *Error) Unwrap() error { return e.Kind }

// New builds a refusal of kind with a formatted message.
func New(kind Kind, retry time.Duration, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...), RetryAfter: retry}
}

// WithIndex marks err as the refusal of record i of a batch request: a
// refusal keeps its kind and sentence and names the record (Index); any
// other error is wrapped so that the edges still see the index.
func WithIndex(err error, i int) error {
	if r, ok := err.(*Error); ok {
		c := *r
		c.Index = &i
		return &c
	}
	return &Indexed{Err: err, I: i}
}

// Indexed is an error that is not a refusal, marked as the refusal of
// batch record I (WithIndex).
type Indexed struct {
	Err error
	I   int
}

func (e *Indexed) Error() string { return e.Err.Error() }
func (e *Indexed) Unwrap() error { return e.Err }

// ErrUndelivered is in the chain of an error for a call that never
// reached the node it was for: its connection could not be made, so the
// node did nothing with it, and the call may be made again elsewhere
// without doing anything twice (errors.Is(err, refusal.ErrUndelivered)).
var ErrUndelivered = errors.New("the call never reached its node")

// As returns the refusal in err's chain, if there is one.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
