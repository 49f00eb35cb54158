package fanout

import (
	"fmt"

	"github.com/narad-io/narad/internal/filter"
	"github.com/narad-io/narad/internal/storage"
)

// The engine's rules (doc.go) that a cursor's own state can show broken,
// checked where they could break: in race builds (assertInvariants) a
// broken one panics, naming the rule and the values; in other builds
// every check below compiles away and cursorChecks is never written.

// cursorChecks is what a running cursor remembers for its checks. Only
// the cursor's goroutine touches it.
type cursorChecks struct {
	// durable is the offset the cursor file holds: the start position,
	// then each advance's.
	durable uint64
	// cleared: every record below it is committed in the child, or was
	// stepped over where the rules allow it (an unreadable range storage
	// counted as loss, drop-behind past records retention deleted, or a
	// record the link's filter does not match — checked by kept).
	cleared uint64
}

// start records where the cursor starts: its file's offset, or the
// anchor it wrote — the one documented reset of a cursor's position.
func (k *cursorChecks) start(pos uint64) {
	if assertInvariants {
		k.durable, k.cleared = pos, pos
	}
}

// clear records that every record below upTo is committed in the child
// (or stepped over as the rules allow).
func (k *cursorChecks) clear(upTo uint64) {
	if assertInvariants {
		k.cleared = max(k.cleared, upTo)
	}
}

// advanced records a durable advance to next.
func (k *cursorChecks) advanced(next uint64) {
	if assertInvariants {
		k.durable = next
	}
}

// beforeAdvance panics if writing next to the cursor file would break a
// rule: commit before advance (next passes a record the child has not
// committed), cursor offsets never move backward within a run, and the
// durable offset never passes the parent's flushed high watermark (l,
// when the parent log is open).
func (k *cursorChecks) beforeAdvance(key cursorKey, next uint64, l *storage.Log) {
	if !assertInvariants {
		return
	}
	flushed, open := uint64(0), l != nil
	if open {
		flushed = l.Flushed()
	}
	if err := k.advanceError(next, flushed, open); err != nil {
		panic(fmt.Sprintf("fanout: cursor %s -> %s partition %d: invariant broken: %v", key.parent, key.child, key.partition, err))
	}
}

func (k *cursorChecks) advanceError(next, flushed uint64, open bool) error {
	switch {
	case next > k.cleared:
		return fmt.Errorf("commit before advance: the cursor file would record %d, but the child has committed only the records below %d", next, k.cleared)
	case next < k.durable:
		return fmt.Errorf("cursor offset moves backward from %d to %d", k.durable, next)
	case open && next > flushed:
		return fmt.Errorf("the cursor file would record %d, past the parent's flushed high watermark %d", next, flushed)
	}
	return nil
}

// matching is what kept checks the filter's selection against: the
// offsets of the slab's records f matches, in slab order (race builds
// only; nil otherwise). It builds each record's header map itself rather
// than through the cursor's code, so the check does not share what it
// checks.
func (k *cursorChecks) matching(f *filter.Filter, slab []storage.Record) []uint64 {
	if !assertInvariants {
		return nil
	}
	var want []uint64
	for i := range slab {
		r := &slab[i]
		var hs map[string]string
		if len(r.Headers) > 0 {
			hs = make(map[string]string, len(r.Headers))
			for _, h := range r.Headers {
				hs[h.Name] = h.Value
			}
		}
		if f.Match(hs, r.Payload) {
			want = append(want, r.Offset)
		}
	}
	return want
}

// kept panics unless the records a filtered slab keeps are exactly the
// ones its filter matches (want, from matching), in slab order: a record
// stepped over is a documented skip only when the filter does not match
// it (rule: filtered links).
func (k *cursorChecks) kept(want []uint64, kept []storage.Record) {
	if !assertInvariants {
		return
	}
	if err := keptError(want, kept); err != nil {
		panic(fmt.Sprintf("fanout: filtered slab: invariant broken: %v", err))
	}
}

func keptError(want []uint64, kept []storage.Record) error {
	for i := range max(len(want), len(kept)) {
		switch {
		case i >= len(kept):
			return fmt.Errorf("filtered links: the filter matches offset %d, which the slab does not keep", want[i])
		case i >= len(want) || kept[i].Offset != want[i]:
			return fmt.Errorf("filtered links: the slab keeps offset %d, not the next record the filter matches", kept[i].Offset)
		}
	}
	return nil
}

// checkBuckets panics unless bucketize's result keeps slab order: every
// record of the slab lands in exactly one bucket, the one dest names,
// each bucket holding its records in slab order (and with it each key's
// order).
func checkBuckets(recs []storage.Record, dest []int32, out [][]storage.Record) {
	if !assertInvariants {
		return
	}
	if err := bucketError(recs, dest, out); err != nil {
		panic(fmt.Sprintf("fanout: bucketize: invariant broken: %v", err))
	}
}

func bucketError(recs []storage.Record, dest []int32, out [][]storage.Record) error {
	next := make([]int, len(out))
	for i := range recs {
		p := dest[i]
		j := next[p]
		if j >= len(out[p]) || !sameRecord(&out[p][j], &recs[i]) {
			return fmt.Errorf("bucket keeps slab order: slab record %d is not record %d of bucket %d", i, j, p)
		}
		next[p]++
	}
	for p := range out {
		if next[p] != len(out[p]) {
			return fmt.Errorf("bucket keeps slab order: bucket %d holds %d records, the slab placed %d there", p, len(out[p]), next[p])
		}
	}
	return nil
}

// sameRecord: b's key and payload are a's, the same bytes in memory
// (bucketize shares them, it does not copy).
func sameRecord(a, b *storage.Record) bool {
	return len(a.Key) == len(b.Key) && len(a.Payload) == len(b.Payload) &&
		(len(a.Key) == 0 || &a.Key[0] == &b.Key[0]) && (len(a.Payload) == 0 || &a.Payload[0] == &b.Payload[0])
}
