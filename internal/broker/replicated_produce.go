package broker

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/messageid"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/wal"
)

// Produce to a replicated topic (docs/replication.md).
//
// The records are placed into partitions exactly as for any topic, then
// each partition's bucket is committed synchronously to its leader through
// the commit seam — the local commit when this node leads it, node RPC to
// the leader otherwise, the path dead-letter copies take (deadletter.go) —
// and the produce answers only once every bucket returned. A leader's
// commit returns once the records are durable on the in-sync set, at least
// a majority of the replicas (awaitQuorum), so a 202 means "on a
// majority", and no receiving node's single disk stands behind it.
//
// Why not the ingress WAL: it answers once the records are on this node's
// disk, before any replica has them, and a WAL lost with its disk would
// lose them. A replicated WAL would be a second replication protocol to
// keep in step with the partitions'; the forward costs one hop instead.
//
// A bucket whose leader is changing hands waits for the next one
// (leader_hold.go) when its leader certainly stored nothing; a bucket of
// records placed by turn goes to another partition instead
// (commitPlaced).
//
// A failed bucket fails the produce (the first error), even though other
// buckets — or the failed one, when only its wait for the quorum timed out
// — may be stored: the client retries, and a msg_id makes the retry
// idempotent (the leader's dedupe window).

// replicatedCommitHop is the room for the hop to the leader: one bucket's
// commit, forward included, is bounded by the leader's own wait
// (Config.ReplicaCommitWait) plus this.
const replicatedCommitHop = 5 * time.Second

// Its answer names each record by its position (package messageid): the
// records came from no WAL, and a replicated partition's copies agree on
// offsets; the leader's commit sets them (Broker.Commit, node RPC's
// answer).
// A record the leader left out as a duplicate, or one an older leader did
// not place, has no id in the answer.
//
// placed marks the records this node placed by turn (nextPartition: no
// key, partition or msg_id; nil when there are none). A bucket of such
// records only may move to another partition (commitPlaced); one that
// also holds records that must go there does not, so that a request's
// records keep their order in the partition. The partition each record
// went to is written back into wrecs.
func (b *Broker) commitReplicated(ctx context.Context, t meta.Topic, wrecs []wal.Record, placed []bool) ([]Accepted, error) {
	type bucket struct {
		p       int
		movable bool
		recs    []storage.Record
	}
	var buckets []*bucket
	index := map[int]int{}        // a partition's bucket
	in := make([]int, len(wrecs)) // each record's bucket
	at := make([]int, len(wrecs)) // and its index there
	for i, r := range wrecs {
		p, movable := int(r.Partition), placed != nil && placed[i]
		j, ok := index[p]
		if !ok {
			j = len(buckets)
			index[p] = j
			buckets = append(buckets, &bucket{p: p, movable: movable})
		}
		bk := buckets[j]
		bk.movable = bk.movable && movable
		in[i], at[i] = j, len(bk.recs)
		bk.recs = append(bk.recs, storage.Record{Key: r.Key, Payload: r.Payload, Headers: r.Headers, Offset: storage.NoOffset})
	}
	errs := make([]error, len(buckets))
	var wg sync.WaitGroup
	for i, bk := range buckets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if bk.movable {
				errs[i] = b.commitPlaced(ctx, t, &bk.p, bk.recs)
			} else {
				errs[i] = b.commitBucket(ctx, t, bk.p, bk.recs)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	inc := messageid.Incarnation(t.Name, t.Incarnation)
	acc := make([]Accepted, len(wrecs))
	for i := range wrecs {
		bk := buckets[in[i]]
		wrecs[i].Partition = int32(bk.p)
		acc[i].Partition = bk.p
		if off := bk.recs[at[i]].Offset; off != storage.NoOffset {
			acc[i].ID = messageid.FromPosition(inc, bk.p, off)
		}
	}
	return acc, nil
}

// commitPlaced commits the records this node placed on partition *p by
// turn (nextPartition), which may go to any partition. When that
// partition's leader refuses them before writing anything (storedNothing:
// the leader could not be reached, does not own the partition, or is not
// ready because its lease lapsed or it is taking the leadership over),
// they go at once to the next partition that looks writable through this
// node, instead of waiting for that leader (commitBucket's hold); *p is
// where they went. The search starts past *p, and writable passes over
// partitions whose forwards lately failed or that this node leads but
// cannot write now. They move once: on the second partition they are
// held as any bucket is; with none writable they are held on *p.
func (b *Broker) commitPlaced(ctx context.Context, t meta.Topic, p *int, recs []storage.Record) error {
	wait := b.cfg.ReplicaCommitWait + replicatedCommitHop
	cctx, cancel := context.WithTimeout(ctx, wait)
	err := b.commitToLeader(cctx, t, *p, recs)
	cancel()
	if err == nil || !storedNothing(err) {
		return unanswered(err, t, *p, wait)
	}
	now := b.cfg.Now()
	for i := 1; i < t.Partitions; i++ {
		if q := (*p + i) % t.Partitions; b.writable(t, q, now) {
			*p = q
			break
		}
	}
	return b.commitBucket(ctx, t, *p, recs)
}

// commitBucket commits one partition's records on its leader, held
// through a change of leader (leader_hold.go), within the leader's own
// wait plus the hop. A leader that did not answer in time is a 503 that
// says the records may be stored, not the context's deadline, which the
// edge would answer as an internal error (a 500).
func (b *Broker) commitBucket(ctx context.Context, t meta.Topic, p int, recs []storage.Record) error {
	wait := b.cfg.ReplicaCommitWait + replicatedCommitHop
	cctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	// A try that is tried again was refused before anything was written
	// (storedNothing), so recs are still as placed.
	err := holdForLeader(cctx, leaderHold, func() (string, bool) { return b.meta.Owner(t.Name, p) }, func() error {
		return b.commitToLeader(cctx, t, p, recs)
	})
	return unanswered(err, t, p, wait)
}

// unanswered is err of a bucket's commit to partition p within wait, with
// the context's deadline turned into the 503 it means.
func unanswered(err error, t meta.Topic, p int, wait time.Duration) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return refusal.New(refusal.ErrUnavailable, time.Second, "partition %d of %q: its leader did not answer within %v; the records may be stored: retry (with a msg_id to make the retry idempotent)", p, t.Name, wait)
	}
	return err
}

// commitToLeader commits a bucket on the partition's leader: here, or by
// node RPC, coalesced with the other produces forwarded to the same
// partition meanwhile (forward_batch.go).
func (b *Broker) commitToLeader(ctx context.Context, t meta.Topic, p int, recs []storage.Record) error {
	owner, ok := b.meta.Owner(t.Name, p)
	if !ok {
		return refusal.New(refusal.ErrUnavailable, time.Second, "partition %d of %q has no leader yet: nothing was stored; retry", p, t.Name)
	}
	if owner == b.cfg.NodeID {
		return b.commitHere(ctx, t.Name, t.Incarnation, p, recs)
	}
	if b.cfg.Remote == nil {
		return refusal.New(refusal.ErrUnavailable, time.Second, "partition %d of %q is led by %q, and this node has no cluster transport", p, t.Name, owner)
	}
	return b.fwd.commit(ctx, forwardKey{t.Name, t.Incarnation, p}, recs, func(merged []storage.Record) error {
		// Bounded like one produce's commit, by no one produce's context.
		cctx, cancel := context.WithTimeout(context.Background(), b.cfg.ReplicaCommitWait+replicatedCommitHop)
		defer cancel()
		owner, ok := b.meta.Owner(t.Name, p)
		if ok && owner == b.cfg.NodeID {
			return b.commitHere(cctx, t.Name, t.Incarnation, p, merged) // led here since
		}
		cctx, stop := b.untilLeaderChanges(cctx, t.Name, p, owner)
		defer stop()
		err := b.cfg.Remote.Commit(cctx, t.Name, t.Incarnation, p, merged)
		if err != nil && errors.Is(context.Cause(cctx), errLeaderChanged) {
			next, _ := b.meta.Owner(t.Name, p)
			return refusal.New(refusal.ErrUnavailable, time.Second, "partition %d of %q: its leader changed from %q to %q while the records were on their way; they may be stored: retry (with a msg_id to make the retry idempotent)", p, t.Name, owner, next)
		}
		return err
	})
}

// errLeaderChanged is the cause of a forwarded commit given up because
// this node's metastore replica names another leader (untilLeaderChanges).
var errLeaderChanged = errors.New("the partition's leader changed")

// untilLeaderChanges returns ctx cancelled, with cause errLeaderChanged,
// Config.LeaderChangeGrace after this node's metastore replica names a
// leader of topic/partition other than owner, and a stop that ends the
// watch.
//
// A forwarded commit to a leader that was cut off without a reset hangs
// until its deadline (the leader's quorum wait plus the hop), and the
// produces forwarded to the same partition wait behind it (one forwarded
// commit per partition in flight, forward_batch.go): every produce of the
// partition through this node would time out for that long, although the
// failover names the next leader within seconds. Given up soon after
// the next leader is named, the commit's produces are answered 503 (may
// be stored, as for any unanswered commit) and the ones behind it go to
// the new leader. A partition with no leader in the view ("", false) is not a
// change: the commit keeps its chance until one is named.
//
// The grace is for a leader that is alive: when the controller moves a
// leadership between live nodes (spreading leaders, a drain), the old
// leader answers within milliseconds, with a 202 for what its quorum
// committed before the election, or not_ready for what it refused
// before writing, which holdForLeader sends to the new leader. Cancelled
// at once, either could become a 503 saying the records may be stored.
func (b *Broker) untilLeaderChanges(ctx context.Context, topic string, p int, owner string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		for {
			// Taken before the check: a change racing it still wakes us.
			changed := b.meta.Watch()
			if now, ok := b.meta.Owner(topic, p); ok && now != owner {
				break
			}
			select {
			case <-changed:
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
		grace := time.NewTimer(max(b.cfg.LeaderChangeGrace, 0))
		defer grace.Stop()
		select {
		case <-grace.C:
			cancel(errLeaderChanged)
		case <-done:
		case <-ctx.Done():
		}
	}()
	return ctx, func() { close(done); cancel(nil) }
}
