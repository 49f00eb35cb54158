package fanout

import (
	"context"
	"time"

	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/messageid"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/route"
	"github.com/narad-io/narad/internal/storage"
)

// commitSlab commits every record of the slab into the child.
// Buckets commit in parallel (up to 16), each with up to 3 quick tries;
// buckets still failing are copied off the parent log and retried alone
// after a 1 s backoff, with the link's epoch re-checked and the records
// re-bucketed under the child's current partition count every time.
// Fan-out never reroutes to a sibling partition: a dead owner stalls its
// bucket until it returns. It returns nil only when everything committed.
//
// It takes the slab over, through a pointer it clears: the records alias
// the parent log's decoded frames, and once the failed buckets are copied
// no reference to them is left, so a long outage holds only the copy (rule:
// retry alone). (A slice parameter would not do: the compiler may keep a
// parameter's stack slot live for the whole call to reload its length from
// it, and that slot holds the slab.)
//
// env is the link's envelope as the child's record named it when the slab
// was read, nil for none (rule: enveloped links; a remote link has none).
func (e *Engine) commitSlab(ctx context.Context, c *cursor, slab *[]storage.Record, env *meta.LinkEnvelope) error {
	if parent, ok := e.meta.Topic(c.key.parent); ok {
		if env == nil || c.link.remote {
			*slab = withSourceIDs(*slab, parent, c.key.partition)
		} else {
			var raw int
			if *slab, raw = withEnvelopes(*slab, parent, c.key.partition, env); raw > 0 {
				e.m.FanoutEnvelopeSkipped.WithLabelValues(c.key.parent, c.key.child).Add(float64(raw))
				e.cfg.Logger.Warn("fan-out copies too large for their envelope went raw", "parent", c.key.parent,
					"child", c.key.child, "partition", c.key.partition, "records", raw)
			}
		}
	}
	if c.link.remote {
		return e.sendRemote(ctx, c, slab)
	}
	k := c.key
	rr := e.rotation(k.child)
	recs := *slab
	*slab = nil // recs is the only reference from here on
	nrecs, nbytes := len(recs), slabBytes(recs)
	for round := 0; ; round++ {
		child, ok := e.meta.Topic(k.child)
		if !ok || child.AttachEpoch != c.link.epoch || child.Parent != k.parent {
			return errStopped
		}
		parentParts := 0
		if hasKeyless(recs) { // read only for a slab that holds a keyless record
			if p, ok := e.meta.Topic(k.parent); ok {
				parentParts = p.Partitions
			}
		}
		failed := e.commitBuckets(ctx, k, bucketize(recs, child.Partitions, parentParts, k.partition, rr))
		if len(failed) == 0 {
			e.m.FanoutBatchRecords.Observe(float64(nrecs))
			e.m.FanoutBatchBytes.Observe(float64(nbytes))
			return nil
		}
		held := make([]storage.Record, 0, nrecs)
		for _, b := range failed {
			held = append(held, b...)
		}
		if round == 0 {
			// Off the parent log: after this the slab is unreachable from
			// here (recs was its last reference) and its frames can go.
			held = detach(held)
		}
		e.cfg.Logger.Warn("fan-out commit failing; retrying only the failed buckets", "parent", k.parent,
			"child", k.child, "partition", k.partition, "records", len(held), "buckets", len(failed))
		recs, failed = held, nil
		if !e.sleep(ctx, e.cfg.Backoff) {
			return ctx.Err()
		}
	}
}

// commitBuckets commits the non-empty buckets, up to Parallel at once, each
// with the quick retries (route.Pass); it returns the records of buckets
// that still failed.
func (e *Engine) commitBuckets(ctx context.Context, k cursorKey, buckets [][]storage.Record) [][]storage.Record {
	parts := make([]int, 0, len(buckets))
	for p, b := range buckets {
		if len(b) > 0 {
			parts = append(parts, p)
		}
	}
	pass := route.Pass{Parallel: e.cfg.Parallel, Quick: e.cfg.QuickRetries, Clock: e.clk}
	errs := pass.Commit(ctx, len(parts), func(ctx context.Context, i int) error {
		cctx, cancel := context.WithTimeout(ctx, commitTimeout)
		defer cancel()
		// 0: the child's current incarnation; the cursor checks its link epoch.
		return e.commit.Commit(cctx, k.child, 0, parts[i], buckets[parts[i]])
	})
	var failed [][]storage.Record
	for i, err := range errs {
		if err != nil {
			failed = append(failed, buckets[parts[i]])
		}
	}
	return failed
}

// commitTimeout bounds one try of one bucket's commit.
const commitTimeout = 30 * time.Second

func hasKeyless(recs []storage.Record) bool {
	for i := range recs {
		if len(recs[i].Key) == 0 {
			return true
		}
	}
	return false
}

func slabBytes(recs []storage.Record) int {
	n := 0
	for i := range recs {
		n += len(recs[i].Key) + len(recs[i].Payload)
	}
	return n
}

// withSourceIDs returns the slab's records as copies of them: each with
// the reserved header header.SourceID naming the message id of its source
// record in partition p of parent (package messageid: from the WAL source
// its log kept, else its position), and no WAL source of its own — the
// copy is another record, whose id the child's log derives from its
// position. Keys and payloads still alias the parent log's frames; the
// headers are new slices (the frames' are shared by readers).
func withSourceIDs(recs []storage.Record, parent meta.Topic, p int) []storage.Record {
	out := make([]storage.Record, len(recs))
	for i, r := range recs {
		id := messageid.Of(parent.Name, parent.Incarnation, p, r.Offset, r.Origin, r.Seq)
		out[i] = storage.Record{Offset: r.Offset, CommittedAt: r.CommittedAt, Key: r.Key, Payload: r.Payload,
			Headers: header.WithSourceID(r.Headers, id)}
	}
	return out
}
