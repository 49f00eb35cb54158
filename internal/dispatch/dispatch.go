package dispatch

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/route"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/wal"
)

// Tuning.
const (
	windowBase      = 4096
	windowCap       = 65536
	perPartition    = 64
	parallel        = 16
	idlePoll        = 10 * time.Millisecond
	retryBackoff    = time.Second
	checkpointEvery = 50 * time.Millisecond
	// lazyCheckpointEvery is the cadence with Lazy: each checkpoint then
	// first flushes every partition committed lazily since the last one
	// (an fdatasync of its segment and one of its hwm file), so a longer
	// cadence is fewer partition fsyncs for the same records. It costs no
	// latency — records are visible before their flush — only WAL kept
	// longer (and re-read after a crash); a WAL gone quiet is
	// checkpointed within the cadence, either way.
	lazyCheckpointEvery = 200 * time.Millisecond
	// minCycle spaces commit cycles whose window was not full and that
	// made an fdatasync. Such a cycle costs one fsync per destination
	// partition on top of the WAL's own, so tiny back-to-back cycles would
	// spend the disk's fsync budget on a few records each and starve the
	// WAL's group commit; a short pause lets a cycle carry more records
	// for the same fsyncs (measured in the note of the broker issue). It
	// bounds how long an accepted record waits before its commit begins.
	// A cycle of lazy commits only (Lazy) makes no fsync and is not held
	// to it (cycleRest).
	minCycle       = 5 * time.Millisecond
	maxWindowBytes = 64 << 20
)

// Discarder decides whether records of a topic incarnation can never
// commit: the topic is absent here or is another incarnation, the replica
// is caught up and the leader confirms that incarnation is not current (the
// topic is gone, or was re-created). incarnation 0 (a version-1 WAL record)
// is settled by the topic's absence alone. Any doubt answers false and the
// records are kept.
type Discarder func(ctx context.Context, topic string, incarnation uint64) bool

// PartitionsFunc returns a topic's current partition count (0 if unknown).
type PartitionsFunc func(topic string) int

// Dispatcher moves WAL records into partition logs.
type Dispatcher struct {
	WAL        *wal.WAL
	Commit     route.Committer
	Discard    Discarder
	Partitions PartitionsFunc
	Metrics    *metrics.Metrics
	Logger     *slog.Logger

	// Backoff between passes over failing buckets; default 1 s.
	Backoff time.Duration

	// Reroute, when set, names a live sibling partition for records whose
	// destination failed passes times in a row (or whose owner membership
	// says is dead): availability over ordering (docs/architecture.md, "The
	// produce path"). ok=false keeps the records waiting for their own
	// partition.
	Reroute func(topic string, partition int32, failedPasses int) (sibling int32, ok bool)

	// Clock paces the idle poll, the spacing of commit cycles, the retry
	// backoff and the checkpoint cadence; nil is the system clock.
	Clock clock.Clock

	// Lazy commits records into partitions this node owns without a
	// partition fdatasync (doc.go: one fsync per record path); they are
	// flushed on the checkpoint cadence, before the checkpoint passes
	// them. Off, every commit fsyncs as before. Either way, commits to
	// partitions owned here carry their WAL seqs and are skipped where the
	// log holds them already (an idempotent re-dispatch after a crash).
	Lazy bool

	origin   uint64
	bootSeq  uint64      // the WAL's last seq when Run began: what a restart replays
	replayed atomic.Bool // every record up to bootSeq was read and tried once
	held     atomic.Pointer[map[partKey]bool]

	mu        sync.Mutex
	unflushed map[storage.Flusher]uint64 // lazily committed logs -> lowest WAL seq not yet flushed
	syncUntil map[partKey]uint64         // commits stay synchronous until the checkpoint passes this seq
}

// partKey is a partition, whatever incarnation.
type partKey struct {
	topic     string
	partition int32
}

// bucketKey is a destination: records of two incarnations of one topic
// name are two destinations, settled apart.
type bucketKey struct {
	topic       string
	incarnation uint64
	partition   int32
}

type bucket struct {
	key      bucketKey
	recs     []storage.Record
	seqs     []uint64 // each record's WAL seq, ascending
	minSeq   uint64   // lowest WAL seq among recs: the checkpoint may not pass it
	fails    int      // consecutive failed passes
	rerouted bool     // its key was changed to a sibling partition
	lazy     bool     // its last commit succeeded lazily (no fdatasync)
}

// Run dispatches until ctx ends.
//
// Failing destinations do not block the others: a bucket whose commit
// fails stays pending (in memory, with the lowest WAL seq it holds) while
// later windows keep committing everything else; later records for a
// pending destination join its bucket, so per-destination order holds.
// The checkpoint advances only to the lowest pending seq, and reading runs
// at most lookahead windows past it.
func (d *Dispatcher) Run(ctx context.Context) {
	if d.Backoff <= 0 {
		d.Backoff = retryBackoff
	}
	clk := clock.Or(d.Clock)
	next := d.WAL.Checkpoint()
	d.start(next)
	every := checkpointEvery
	if d.Lazy {
		every = lazyCheckpointEvery
	}
	window := windowBase
	pending := map[bucketKey]*bucket{}
	var lastRetry, lastCheckpoint time.Time
	for ctx.Err() == nil {
		ch := d.WAL.Notify()
		safe := next
		for _, b := range pending {
			safe = min(safe, b.minSeq)
		}
		d.hold(next, pending)
		// The checkpoint costs fsyncs (temp file, rename, directory), and
		// lazily committed partitions are flushed before it: at most every
		// checkpointEvery (lazyCheckpointEvery with Lazy), busy or caught
		// up. Caught up, the idle loop comes back here every idlePoll at
		// most, so a WAL that went quiet is checkpointed within the
		// cadence.
		if safe > d.WAL.Checkpoint() && clock.Since(clk, lastCheckpoint) >= every {
			d.checkpoint(ctx, safe)
			lastCheckpoint = clk.Now()
		}
		if len(pending) > 0 && clock.Since(clk, lastRetry) >= d.Backoff {
			d.commitAll(ctx, pending)
			lastRetry = clk.Now()
			continue
		}
		var recs []wal.Record
		if next-safe < lookahead*uint64(window) {
			var err error
			if recs, err = d.WAL.Read(next, window, maxWindowBytes); err != nil {
				d.Logger.Error("dispatch: read ingress WAL", "from", next, "err", err)
				d.Metrics.Errors.WithLabelValues("dispatch", "wal_read").Inc()
				clock.Sleep(ctx, clk, d.Backoff)
				continue
			}
		}
		d.Metrics.DispatchPending.Set(float64(d.WAL.LastSeq() + 1 - safe))
		d.Metrics.IngressWALBytes.Set(float64(d.WAL.SizeBytes()))
		d.Metrics.IngressWALFenced.Set(boolGauge(errors.Is(d.WAL.Health(), wal.ErrFenced)))
		if len(recs) == 0 {
			// Caught up. No checkpoint here: at a trickle of records the
			// dispatcher is caught up after nearly every one, and each
			// checkpoint flushes every lazily committed partition (an
			// fdatasync of its segment and of its hwm file) and writes the
			// checkpoint file: several fdatasyncs a record where the WAL
			// made one. The cadence above covers a WAL gone quiet.
			wait := idlePoll
			if len(pending) > 0 {
				wait = min(wait, lastRetry.Add(d.Backoff).Sub(clk.Now()))
			}
			t := clk.NewTimer(max(wait, time.Millisecond))
			select {
			case <-ctx.Done():
			case <-ch:
			case <-t.C():
			}
			t.Stop()
			continue
		}
		fresh := map[bucketKey]*bucket{}
		for _, b := range bucketize(recs, d.origin) {
			if p, ok := pending[b.key]; ok {
				p.recs = append(p.recs, b.recs...) // keep the destination's order behind its stuck records
				p.seqs = append(p.seqs, b.seqs...)
				continue
			}
			fresh[b.key] = b
		}
		full := len(recs) >= window
		window = min(max(perPartition*len(fresh), windowBase), windowCap)
		cycleStart := clk.Now()
		left, synced := d.commitAll(ctx, fresh)
		for k, b := range left {
			pending[k] = b
			if len(pending) == 1 {
				lastRetry = clk.Now()
			}
		}
		next = recs[len(recs)-1].Seq + 1
		if !full {
			clock.Sleep(ctx, clk, cycleRest(clock.Since(clk, cycleStart), synced))
		}
	}
	// Stopping: checkpoint what is committed, so a graceful stop leaves
	// nothing of it to replay (only a crash may redeliver: at least once).
	safe := next
	for _, b := range pending {
		safe = min(safe, b.minSeq)
	}
	d.checkpoint(context.WithoutCancel(ctx), safe) // flushes lazy partitions even when it cannot move
}

const lookahead = 16

// cycleRest is the pause after a commit cycle that took took: what is left
// of minCycle, and at least took itself, so partition fdatasyncs occupy at
// most half of the time. When the disk is contended (on a loaded 2-core
// machine, partition fdatasyncs averaged 2.9 ms against 0.2 ms quiet) a
// cycle's fsyncs slow down the WAL's own, which every produce waits for;
// backing off in proportion lets each cycle carry more records for the same
// fsyncs instead of spending the disk on a few records each. The pause is
// capped at maxRest: a commit slowed by something else than the disk (an
// owner timing out) must not hold back the cycles behind it as long.
//
// A cycle that made no fdatasync (synced false: every commit lazy, into
// partitions this node owns) spent no fsync budget, so minCycle's floor
// has no reason there: it rests as long as it took, which keeps the
// dispatcher at most half of the time committing and its cycles growing
// with the load, and no longer holds a record back from consumers for
// up to minCycle at a moderate rate (docs/performance.md has the
// figures).
func cycleRest(took time.Duration, synced bool) time.Duration {
	if !synced {
		return min(took, maxRest)
	}
	return min(max(minCycle-took, took), maxRest)
}

// maxRest bounds cycleRest, and so what it adds to produce-to-consumable
// latency under contention.
const maxRest = 2 * minCycle

// checkpoint flushes every lazily committed partition, then moves the WAL
// checkpoint to seq, or to the lowest seq a failed flush still holds.
func (d *Dispatcher) checkpoint(ctx context.Context, seq uint64) {
	seq = min(seq, d.flush(ctx))
	if seq <= d.WAL.Checkpoint() {
		return
	}
	if err := d.WAL.SetCheckpoint(seq); err != nil {
		d.Logger.Warn("dispatch: checkpoint", "seq", seq, "err", err)
		d.Metrics.Errors.WithLabelValues("dispatch", "checkpoint").Inc()
	}
}

// bucketize groups records by destination, keeping WAL order within each.
// A first pass counts each destination's records, so the buckets are cut
// from one array at their exact sizes: appending bucket by bucket grew
// each slice a dozen times per window (BenchmarkBucketize: 40 allocations
// and 733 KB per window of 4,096 records, now 6 and 295 KB).
// Each bucket's capacity ends at its length, so appending to it (a pending
// destination's later records) copies instead of writing into the next.
//
// Each record carries its WAL source (origin, the WAL's identity, and its
// seq): the message id produce answered with (package messageid), which
// the partition log keeps wherever the bucket is committed — here with its
// source, on another node by node RPC, or rerouted to a sibling.
func bucketize(recs []wal.Record, origin uint64) []*bucket {
	idx := make(map[bucketKey]int)
	var out []*bucket
	var counts []int
	dest := make([]int, len(recs))
	for i, r := range recs {
		k := bucketKey{r.Topic, r.Incarnation, r.Partition}
		j, ok := idx[k]
		if !ok {
			j = len(out)
			idx[k] = j
			out = append(out, &bucket{key: k, minSeq: r.Seq})
			counts = append(counts, 0)
		}
		dest[i] = j
		counts[j]++
	}
	all := make([]storage.Record, len(recs))
	allSeqs := make([]uint64, len(recs))
	at := 0
	for j, b := range out {
		b.recs = all[at : at : at+counts[j]]
		b.seqs = allSeqs[at : at : at+counts[j]]
		at += counts[j]
	}
	for i, r := range recs {
		b := out[dest[i]]
		b.recs = append(b.recs, storage.Record{Key: r.Key, Payload: r.Payload, Headers: r.Headers, Origin: origin, Seq: r.Seq})
		b.seqs = append(b.seqs, r.Seq)
	}
	return out
}

// commitAll commits every bucket once, up to parallel at a time (one
// route.Pass, no quick retries: a failed bucket waits for the next pass
// after Backoff), removes the committed ones from buckets and returns it
// (the failed ones), and whether the pass made an fdatasync or failed
// anywhere (synced), which paces the next cycle (cycleRest).
func (d *Dispatcher) commitAll(ctx context.Context, buckets map[bucketKey]*bucket) (left map[bucketKey]*bucket, synced bool) {
	keys := make([]bucketKey, 0, len(buckets))
	list := make([]*bucket, 0, len(buckets))
	for k, b := range buckets {
		keys, list = append(keys, k), append(list, b)
	}
	errs := route.Pass{Parallel: parallel, Clock: d.Clock}.Commit(ctx, len(list), func(ctx context.Context, i int) error {
		if d.commitOne(ctx, list[i]) {
			return nil
		}
		list[i].fails++
		return errNotCommitted
	})
	for i, k := range keys {
		if !list[i].lazy { // an fdatasync, a reroute, a discard or a failure: paced as before
			synced = true
		}
		if errs[i] == nil {
			delete(buckets, k) // by the map key: a reroute changes b.key
		}
	}
	return buckets, synced
}

// errNotCommitted marks a bucket commitOne left for the next pass.
var errNotCommitted = errors.New("dispatch: bucket not committed; retried next pass")

// commitOne commits a bucket, or settles what cannot ever commit.
func (d *Dispatcher) commitOne(ctx context.Context, b *bucket) bool {
	b.lazy = false
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if d.Reroute != nil {
		if sib, ok := d.Reroute(b.key.topic, b.key.partition, b.fails); ok && sib != b.key.partition {
			if err := d.rerouted(cctx, b, sib); err == nil {
				d.Metrics.DispatchRerouted.Add(float64(len(b.recs)))
				d.Logger.Warn("dispatch: rerouted records to a live sibling partition", "topic", b.key.topic,
					"from", b.key.partition, "to", sib, "records", len(b.recs))
				return true
			}
		}
	}
	err := d.commitHome(cctx, b)
	if err == nil {
		return true
	}
	// The owner's refusal, typed the same whether the commit ran here or
	// on another node (package refusal; node RPC rebuilds the kind).
	switch {
	case errors.Is(err, refusal.ErrTopicNotFound): // absent here, or a deleted incarnation
		if d.Discard(ctx, b.key.topic, b.key.incarnation) {
			d.Metrics.DispatchDiscarded.Add(float64(len(b.recs)))
			d.Logger.Warn("dispatch: discarded records of a deleted topic", "topic", b.key.topic,
				"incarnation", b.key.incarnation, "records", len(b.recs))
			return true
		}
		d.Metrics.DispatchKept.Inc()
	case errors.Is(err, refusal.ErrPartitionRange):
		// The partition no longer exists (the topic was recreated with
		// fewer partitions): commit to a live sibling instead.
		if n := d.Partitions(b.key.topic); n > 0 && int(b.key.partition) >= n {
			sib := b.key.partition % int32(n)
			d.Metrics.DispatchRerouted.Add(float64(len(b.recs)))
			err := d.rerouted(cctx, b, sib)
			b.key.partition, b.rerouted = sib, true
			return err == nil
		}
	}
	d.Logger.Warn("dispatch: commit failed, will retry", "topic", b.key.topic, "partition", b.key.partition, "err", err)
	d.Metrics.Errors.WithLabelValues("dispatch", "commit").Inc()
	return false
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
