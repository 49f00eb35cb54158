package meta

import (
	"errors"
	"fmt"
)

// Outcome errors of a command. Apply wraps them with a message naming the
// input ("meta: topic \"orders\": exists"); test with errors.Is. They map onto
// the HTTP vocabulary: ErrNotFound 404, ErrExists and ErrConflict 409,
// ErrInvalid (and ErrInvalidCombination) 400.
var (
	ErrExists   = errors.New("exists")
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
	ErrInvalid  = errors.New("invalid command")
	// ErrInvalidCombination is a well-formed command whose settings do not
	// go together (a topic attached to itself, a retention a delay child
	// cannot live with): errors.Is(err, ErrInvalid) holds too, so it is a
	// 400 like any invalid command, as the reference answers.
	ErrInvalidCombination error = kindOf{"invalid combination", ErrInvalid}
)

// kindOf is an outcome that is also a broader one.
type kindOf struct {
	msg   string
	broad error
}

func (k kindOf) Error() string { return k.msg }
func (k kindOf) Unwrap() error { return k.broad }

// Errors of the store itself rather than of a command.
var (
	// ErrNotLeader: the write or barrier must run on the leader. The
	// concrete error is a *NotLeaderError carrying the leader, if known.
	ErrNotLeader = errors.New("not the leader")
	// ErrNotConfirmed: leader confirmation could not give a definitive
	// answer. Callers keep their data and try again later.
	ErrNotConfirmed = errors.New("could not confirm with the leader")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("metastore closed")
	// ErrOutcomeUnknown: the leader lost leadership (or the wait ended)
	// before the command was known committed; it may or may not apply.
	ErrOutcomeUnknown = errors.New("outcome unknown")
)

// NotLeaderError is returned by writes on a follower. LeaderID and
// LeaderAddr (the Raft address) are empty when no leader is known; the
// cluster layer forwards the write there. errors.Is(err, ErrNotLeader) holds.
type NotLeaderError struct {
	LeaderID   string
	LeaderAddr string
}

func (e *NotLeaderError) Error() string {
	if e.LeaderAddr == "" {
		return "meta: not the leader (no leader known)"
	}
	return fmt.Sprintf("meta: not the leader (leader %s at %s)", e.LeaderID, e.LeaderAddr)
}

// Is makes errors.Is(err, ErrNotLeader) true.
func (e *NotLeaderError) Is(target error) bool { return target == ErrNotLeader }

// isOutcome reports whether err is a command's validation outcome (as
// opposed to a storage failure inside Apply).
func isOutcome(err error) bool {
	return errors.Is(err, ErrExists) || errors.Is(err, ErrNotFound) ||
		errors.Is(err, ErrConflict) || errors.Is(err, ErrInvalid)
}

func topicErr(name string, kind error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if msg == "" {
		return fmt.Errorf("meta: topic %q: %w", name, kind)
	}
	return fmt.Errorf("meta: topic %q: %w: %s", name, kind, msg)
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("meta: %w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}
