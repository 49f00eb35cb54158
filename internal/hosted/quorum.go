package hosted

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/narad-io/narad/internal/refusal"
)

// A replicated commit answers once the in-sync set holds it: the wait a
// produce makes after its records are written on the leader, and the
// refusals it may end in, all of which say the records may be stored.

// AwaitQuorum returns once the in-sync set holds every record up to end
// (the log's end right after the commit that just returned under role:
// acknowledged = committed), bounded by Config.ReplicaCommitWait. It waits
// on role's leader only: if that leadership ends first (deposed, stopped
// here, even if this node leads again later at another epoch) the answer
// is a refusal, never a 202 for records a later leadership may cut. A
// single copy (role nil) returns at once.
func (r *Roles) AwaitQuorum(ctx context.Context, topic string, p int, role *Role, end uint64) error {
	if role == nil || end == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.ReplicaCommitWait)
	defer cancel()
	if err := role.leader.WaitCommitted(ctx, end-1); err != nil {
		r.m.Errors.WithLabelValues("broker", "replication_wait").Inc()
		// The records are written here: never not_ready, which says they
		// were not (package refusal), and which a forwarding node would
		// send again.
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return refusal.New(refusal.ErrUnavailable, time.Second, "partition %d of %q: the records are not on a majority of replicas yet; they may be stored: retry (with a msg_id to make the retry idempotent)", p, topic)
		}
		// The sentence a client sees is the refusal's own (package
		// apierr), so it is rebuilt to say the records may be stored: a
		// wrapping error's words never reach the client.
		ref, ok := refusal.As(replicaRefusal(err, topic, p))
		if !ok {
			return fmt.Errorf("%w; the records may be stored", err)
		}
		kind := ref.Kind
		if kind == refusal.ErrNotReady {
			kind = refusal.ErrUnavailable
		}
		return refusal.New(kind, ref.RetryAfter, "%s; the records may be stored: retry (with a msg_id to make the retry idempotent)", ref.Message)
	}
	return nil // visible now, and its consumers woken (wakingLog)
}
