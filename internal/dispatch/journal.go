package dispatch

import (
	"context"
	"math"

	"github.com/narad-io/narad/internal/route"
	"github.com/narad-io/narad/internal/storage"
)

// The WAL as the journal of the partition logs (doc.go): sourced commits
// that may be lazy, the flush before the checkpoint, and the replay gate.

// start readies the journal state for a Run beginning at checkpoint next.
func (d *Dispatcher) start(next uint64) {
	d.origin = d.WAL.Identity()
	d.bootSeq = d.WAL.LastSeq()
	d.mu.Lock()
	d.unflushed = map[storage.Flusher]uint64{}
	d.syncUntil = map[partKey]uint64{}
	d.mu.Unlock()
	d.replayed.Store(next > d.bootSeq)
}

// Replaying reports whether partition p of topic may still be owed records
// of this node's ingress WAL from before this Run: until every record up
// to the WAL's last seq at start was read and tried once, every partition;
// after that, those with records of then still failing. The broker refuses
// commits from elsewhere into such a partition (broker.Config.ReplayGate):
// after a power cut its lazily committed tail is gone from the disk but
// readers saw it, and only the WAL, re-dispatched first and in order, puts
// the same records back at the same offsets.
func (d *Dispatcher) Replaying(topic string, partition int) bool {
	if !d.replayed.Load() {
		return true
	}
	h := d.held.Load()
	return h != nil && (*h)[partKey{topic, int32(partition)}]
}

// hold recomputes Replaying's answer before each cycle.
func (d *Dispatcher) hold(next uint64, pending map[bucketKey]*bucket) {
	held := map[partKey]bool{}
	for _, b := range pending {
		if !b.rerouted && b.minSeq <= d.bootSeq {
			held[partKey{b.key.topic, b.key.partition}] = true
		}
	}
	if old := d.held.Load(); old == nil || len(*old) != 0 || len(held) != 0 {
		d.held.Store(&held)
	}
	// Only now: Replaying reads replayed first, then held, so the held
	// set must be current before replayed says to look at it — else a
	// partition still waiting for its boot records reads as released for
	// a moment (and commits from other nodes could land ahead of them).
	if next > d.bootSeq {
		d.replayed.Store(true)
	}
}

// commitHome commits b to its own partition: with its WAL source when the
// commit seam takes one, so a partition owned here skips what it holds
// already and, when d.Lazy and nothing rerouted from it is still above
// the checkpoint, commits without an fdatasync.
func (d *Dispatcher) commitHome(ctx context.Context, b *bucket) error {
	sc, ok := d.Commit.(route.SourcedCommitter)
	if !ok || b.rerouted {
		return d.Commit.Commit(ctx, b.key.topic, b.key.incarnation, int(b.key.partition), b.recs)
	}
	k := partKey{b.key.topic, b.key.partition}
	d.mu.Lock()
	lazy := d.Lazy && d.WAL.Checkpoint() > d.syncUntil[k]
	d.mu.Unlock()
	f, err := sc.CommitSourced(ctx, b.key.topic, b.key.incarnation, int(b.key.partition), b.recs,
		storage.Source{Origin: d.origin, Seqs: b.seqs, Lazy: lazy})
	if err == nil && f != nil {
		b.lazy = true
		d.mu.Lock()
		if s, ok := d.unflushed[f]; !ok || b.minSeq < s {
			d.unflushed[f] = b.minSeq
		}
		d.mu.Unlock()
	}
	return err
}

// rerouted commits b into sibling partition sib, synchronously and without
// its source: those records are not sib's in WAL order, and sib's held
// seq must stay a statement about sib's own records. Until the checkpoint
// passes them, b's own partition commits synchronously too: a replay after
// a power cut re-commits what is above the checkpoint and not held by the
// partition's durable frames, and a lost lazy tail there would let these
// rerouted records slip in before it, moving its offsets.
func (d *Dispatcher) rerouted(ctx context.Context, b *bucket, sib int32) error {
	k := partKey{b.key.topic, b.key.partition}
	d.mu.Lock()
	d.syncUntil[k] = max(d.syncUntil[k], b.seqs[len(b.seqs)-1])
	d.mu.Unlock()
	return d.Commit.Commit(ctx, b.key.topic, b.key.incarnation, int(sib), b.recs)
}

// flush makes every lazily committed partition durable and returns the
// lowest WAL seq still not flushed (math.MaxUint64: none). Logs are
// flushed up to parallel at a time; one that fails keeps its seq, so the
// checkpoint holds there and the next cycle tries again. It runs on Run's
// goroutine between commit passes, so no commit races it.
func (d *Dispatcher) flush(ctx context.Context) uint64 {
	d.mu.Lock()
	logs := make([]storage.Flusher, 0, len(d.unflushed))
	seqs := make([]uint64, 0, len(d.unflushed))
	for f, s := range d.unflushed {
		logs, seqs = append(logs, f), append(seqs, s)
	}
	d.mu.Unlock()
	low := uint64(math.MaxUint64)
	if len(logs) == 0 {
		return low
	}
	failed := make([]error, len(logs))
	route.Pass{Parallel: parallel, Clock: d.Clock}.Commit(ctx, len(logs), func(_ context.Context, i int) error {
		failed[i] = logs[i].Flush()
		return failed[i]
	})
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, f := range logs {
		if failed[i] != nil {
			low = min(low, seqs[i])
			d.Logger.Warn("dispatch: flush of a lazily committed partition failed; the WAL keeps its records", "seq", seqs[i], "err", failed[i])
			d.Metrics.Errors.WithLabelValues("dispatch", "flush").Inc()
			continue
		}
		delete(d.unflushed, f)
	}
	return low
}
