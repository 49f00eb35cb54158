package dispatch

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/route"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/wal"
)

// Tuning of 06-cluster.md.
const (
	windowBase      = 4096
	windowCap       = 65536
	perPartition    = 64
	parallel        = 16
	idlePoll        = 10 * time.Millisecond
	retryBackoff    = time.Second
	checkpointEvery = 50 * time.Millisecond
	maxWindowBytes  = 64 << 20
)

// Discarder decides whether records of a topic can never commit: the topic
// is absent here, the replica is caught up and the leader confirms it is
// gone. Any doubt answers false and the records are kept.
type Discarder func(ctx context.Context, topic string) bool

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
}

type bucketKey struct {
	topic     string
	partition int32
}

type bucket struct {
	key  bucketKey
	recs []storage.Record
	done bool
}

// Run dispatches until ctx ends. It returns after the last in-flight
// commit finished, with the checkpoint as far as it safely got.
func (d *Dispatcher) Run(ctx context.Context) {
	if d.Backoff <= 0 {
		d.Backoff = retryBackoff
	}
	next := d.WAL.Checkpoint()
	window := windowBase
	lastCheckpoint := time.Now()
	for ctx.Err() == nil {
		ch := d.WAL.Notify()
		recs, err := d.WAL.Read(next, window, maxWindowBytes)
		if err != nil {
			d.Logger.Error("dispatch: read ingress WAL", "from", next, "err", err)
			d.Metrics.Errors.WithLabelValues("dispatch", "wal_read").Inc()
			sleep(ctx, d.Backoff)
			continue
		}
		d.Metrics.DispatchPending.Set(float64(d.WAL.LastSeq() + 1 - next))
		d.Metrics.IngressWALBytes.Set(float64(d.WAL.SizeBytes()))
		if len(recs) == 0 {
			if next != d.WAL.Checkpoint() {
				d.checkpoint(next)
				lastCheckpoint = time.Now()
			}
			select {
			case <-ctx.Done():
			case <-ch:
			case <-time.After(idlePoll):
			}
			continue
		}
		buckets := bucketize(recs)
		if !d.commitAll(ctx, buckets) {
			return // cancelled: the checkpoint stays before this window
		}
		next = recs[len(recs)-1].Seq + 1
		window = min(max(perPartition*len(buckets), windowBase), windowCap)
		if time.Since(lastCheckpoint) >= checkpointEvery {
			d.checkpoint(next)
			lastCheckpoint = time.Now()
		}
	}
}

func (d *Dispatcher) checkpoint(seq uint64) {
	if err := d.WAL.SetCheckpoint(seq); err != nil {
		d.Logger.Warn("dispatch: checkpoint", "seq", seq, "err", err)
		d.Metrics.Errors.WithLabelValues("dispatch", "checkpoint").Inc()
	}
}

// bucketize groups records by destination, keeping WAL order within each.
func bucketize(recs []wal.Record) []*bucket {
	idx := make(map[bucketKey]int)
	var out []*bucket
	for _, r := range recs {
		k := bucketKey{r.Topic, r.Partition}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, &bucket{key: k})
		}
		out[i].recs = append(out[i].recs, storage.Record{Key: r.Key, Payload: r.Payload})
	}
	return out
}

// commitAll commits every bucket, retrying failing ones (and only those)
// until each is committed or discarded. False if ctx ended first.
func (d *Dispatcher) commitAll(ctx context.Context, buckets []*bucket) bool {
	for {
		var wg sync.WaitGroup
		sem := make(chan struct{}, parallel)
		failed := 0
		var mu sync.Mutex
		for _, b := range buckets {
			if b.done {
				continue
			}
			wg.Add(1)
			sem <- struct{}{}
			go func(b *bucket) {
				defer func() { <-sem; wg.Done() }()
				if d.commitOne(ctx, b) {
					b.done = true
					return
				}
				mu.Lock()
				failed++
				mu.Unlock()
			}(b)
		}
		wg.Wait()
		if failed == 0 {
			return true
		}
		if !sleep(ctx, d.Backoff) {
			return false
		}
	}
}

// commitOne commits a bucket, or settles what cannot ever commit.
func (d *Dispatcher) commitOne(ctx context.Context, b *bucket) bool {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := d.Commit.Commit(cctx, b.key.topic, int(b.key.partition), b.recs)
	if err == nil {
		return true
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		switch ae.Status {
		case http.StatusNotFound:
			if d.Discard(ctx, b.key.topic) {
				d.Logger.Warn("dispatch: discarded records of a deleted topic", "topic", b.key.topic, "records", len(b.recs))
				return true
			}
		case http.StatusBadRequest:
			// The partition no longer exists (the topic was recreated
			// with fewer partitions): commit to a live sibling instead.
			if n := d.Partitions(b.key.topic); n > 0 && int(b.key.partition) >= n {
				b.key.partition %= int32(n)
				d.Metrics.DispatchRerouted.Add(float64(len(b.recs)))
				return d.Commit.Commit(cctx, b.key.topic, int(b.key.partition), b.recs) == nil
			}
		}
	}
	d.Logger.Warn("dispatch: commit failed, will retry", "topic", b.key.topic, "partition", b.key.partition, "err", err)
	d.Metrics.Errors.WithLabelValues("dispatch", "commit").Inc()
	return false
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
