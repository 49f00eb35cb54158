package hosted

import (
	"context"
	"strings"
	"sync"

	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/storage"
)

// The idempotent-produce window (docs/concepts.md, "Producer ids and
// deduplication"): within a topic's dedupe_window_ms, a partition stores at
// most one record per producer msg_id (header.MsgID). The decision is the
// partition owner's, made at commit time (window.go), so it holds
// whichever node's ingress WAL the record came from and however often it was
// produced.
//
// The rules of one partition's window, kept by idWindow:
//   - an id is remembered with the commit time of the record that carried
//     it, and forgotten once that time is older than now − window;
//   - a record whose id is remembered is a duplicate: it is not stored
//     (the produce that carried it was answered 202 long before);
//   - a batch's later records with an id an earlier one has are
//     duplicates too;
//   - an id being committed right now (a claim) is neither remembered nor
//     free: a commit carrying it waits for the claim's outcome — stored
//     (then it is a duplicate) or failed (then it may store it) — so two
//     concurrent commits can never both store one id;
//   - at most maxIDs ids are remembered; past that the oldest are
//     forgotten before their window ends, and counted (forgotten), so a
//     retry of one of them would be stored again.

// DefaultMaxIDs is the per-partition cap on remembered ids:
// with ids of up to 128 bytes, some 25 MiB per partition at worst
// (36-byte UUIDs: about 12 MiB), and a rebuild on open that reads at
// most this many records.
const DefaultMaxIDs = 100_000

// seenID is one remembered id and the commit time of its record.
type seenID struct {
	id string
	at int64 // unix ms
}

// claim is a set of ids some commit is storing now; done closes when that
// commit's outcome is known.
type claim struct {
	ids  []string
	done chan struct{}
}

// idWindow is one partition's remembered ids.
type idWindow struct {
	mu sync.Mutex
	// log is the log instance the ids were read from (rebuildFor): a log
	// opened again — after idle eviction, a move back, a restart — may
	// hold records another owner committed, so its window is read anew.
	log      *storage.Log
	builtFor int64 // the window length the ids were read for
	seen     map[string]int64
	fifo     []seenID // commit order (commit times never decrease)
	head     int      // fifo[head:] is live
	pending  map[string]*claim
	maxIDs   int
}

func newIDWindow(maxIDs int) *idWindow {
	return &idWindow{seen: make(map[string]int64), pending: make(map[string]*claim), maxIDs: maxIDs}
}

// expire forgets the ids whose records were committed before cutoff.
// Called under mu.
func (w *idWindow) expire(cutoff int64) {
	for w.head < len(w.fifo) && w.fifo[w.head].at < cutoff {
		w.drop()
	}
	w.compact()
}

// drop forgets the oldest remembered id. Called under mu.
func (w *idWindow) drop() {
	e := w.fifo[w.head]
	if at, ok := w.seen[e.id]; ok && at == e.at {
		delete(w.seen, e.id)
	}
	w.fifo[w.head] = seenID{}
	w.head++
}

// compact gives the fifo's dead prefix back once it is half the array.
func (w *idWindow) compact() {
	if w.head > 0 && w.head >= len(w.fifo)/2 {
		n := copy(w.fifo, w.fifo[w.head:])
		clear(w.fifo[n:])
		w.fifo, w.head = w.fifo[:n], 0
	}
}

// remember records id as committed at at, and returns how many ids the
// cap made it forget early. Called under mu.
func (w *idWindow) remember(id string, at int64) (forgotten int) {
	if old, ok := w.seen[id]; ok && old >= at {
		return 0
	}
	w.seen[id] = at
	w.fifo = append(w.fifo, seenID{id: id, at: at})
	for len(w.seen) > w.maxIDs && w.head < len(w.fifo) {
		before := len(w.seen)
		w.drop()
		forgotten += before - len(w.seen)
	}
	w.compact()
	return forgotten
}

// admit decides which of recs to store at now: it returns their indices
// (nil when every record is kept: nothing to copy) and how many were
// duplicates, and claims the kept records' ids until settle. When a
// record's id is claimed by a commit still running it waits for that
// commit and decides again.
func (w *idWindow) admit(ctx context.Context, recs []storage.Record, now, window int64) (keep []int, dups int, c *claim, err error) {
	for {
		w.mu.Lock()
		w.expire(now - window)
		keep, dups, c, wait := w.decide(recs)
		w.mu.Unlock()
		if wait == nil {
			return keep, dups, c, nil
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, 0, nil, ctx.Err()
		}
	}
}

// decide is one pass of admit. Called under mu.
func (w *idWindow) decide(recs []storage.Record) (keep []int, dups int, c *claim, wait chan struct{}) {
	var ids []string
	var batch map[string]struct{} // ids earlier records of recs carry
	for i := range recs {
		id, ok := header.MsgIDOf(recs[i].Headers)
		if !ok {
			if keep != nil {
				keep = append(keep, i)
			}
			continue
		}
		if p, ok := w.pending[id]; ok {
			return nil, 0, nil, p.done
		}
		_, seen := w.seen[id]
		_, twice := batch[id]
		if seen || twice {
			if keep == nil { // the first duplicate: every record before it is kept
				keep = make([]int, i, len(recs))
				for j := range keep {
					keep[j] = j
				}
			}
			dups++
			continue
		}
		if keep != nil {
			keep = append(keep, i)
		}
		if batch == nil {
			batch = make(map[string]struct{})
		}
		batch[id] = struct{}{}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return keep, dups, nil, nil
	}
	c = &claim{ids: ids, done: make(chan struct{})}
	for _, id := range ids {
		w.pending[id] = c
	}
	return keep, dups, c, nil
}

// settle ends a claim: on success the ids are remembered with their
// records' commit times (stored holds the records as committed), on
// failure they are free again. Either way the commits waiting on it decide
// again. It returns how many ids the cap made the window forget.
func (w *idWindow) settle(c *claim, stored []storage.Record, ok bool) (forgotten int) {
	if c == nil {
		return 0
	}
	w.mu.Lock()
	for _, id := range c.ids {
		delete(w.pending, id)
	}
	if ok {
		for i := range stored {
			if id, has := header.MsgIDOf(stored[i].Headers); has {
				// A clone: the id must not pin the buffer it was decoded from.
				forgotten += w.remember(strings.Clone(id), stored[i].CommittedAt)
			}
		}
	}
	w.mu.Unlock()
	close(c.done)
	return forgotten
}
