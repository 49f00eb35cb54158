package fanout

import (
	"encoding/binary"
	"hash/fnv"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"github.com/narad-io/narad/internal/storage"
)

// TestBucketizeProperties checks bucketize against the seed's placement
// rules on random slabs, with the rules restated here independently of the
// code (rule: slab order per bucket; keylessKeepsIndex):
//
//   - every record lands in exactly one bucket, and each bucket keeps slab
//     order — so records of one key, which share a bucket, keep their order;
//   - a keyed record goes to FNV-1a 32 of its key modulo the child's
//     partition count;
//   - a keyless record keeps its parent partition's index when the child
//     has the parent's partition count, and takes the next turn of the
//     child's round-robin otherwise: the rotation advances once per
//     keyless record, never for a keyed one, and no key is invented.
func TestBucketizeProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		childParts := rapid.IntRange(1, 12).Draw(rt, "childParts")
		parentParts := rapid.IntRange(1, 12).Draw(rt, "parentParts")
		parentPartition := rapid.IntRange(0, parentParts-1).Draw(rt, "parentPartition")
		rr0 := rapid.Uint64().Draw(rt, "rotation")
		keys := rapid.SliceOfN(rapid.SliceOfN(rapid.Byte(), 0, 3), 0, 64).Draw(rt, "keys")

		recs := make([]storage.Record, len(keys))
		for i, k := range keys {
			var id [8]byte
			binary.BigEndian.PutUint64(id[:], uint64(i))
			recs[i] = storage.Record{Offset: uint64(1000 + i), Key: k, Payload: id[:]}
		}
		var rr atomic.Uint64
		rr.Store(rr0)
		out := bucketize(recs, childParts, parentParts, parentPartition, &rr)

		if len(out) != childParts {
			rt.Fatalf("%d buckets for %d child partitions", len(out), childParts)
		}
		placed := make([]int, len(recs)) // slab index -> child partition
		for i := range placed {
			placed[i] = -1
		}
		for p, b := range out {
			if b != nil && len(b) == 0 {
				rt.Fatalf("bucket %d is empty but not nil", p)
			}
			last := -1
			for _, r := range b {
				i := int(binary.BigEndian.Uint64(r.Payload))
				if placed[i] != -1 {
					rt.Fatalf("record %d placed twice (%d and %d)", i, placed[i], p)
				}
				placed[i] = p
				if i <= last {
					rt.Fatalf("bucket %d holds record %d after %d: slab order lost", p, i, last)
				}
				last = i
				if string(r.Key) != string(recs[i].Key) || (len(recs[i].Key) == 0) != (len(r.Key) == 0) {
					rt.Fatalf("record %d key %q became %q", i, recs[i].Key, r.Key)
				}
			}
		}

		keepIndex := childParts == parentParts
		turn := rr0
		for i, r := range recs {
			var want int
			switch {
			case len(r.Key) > 0:
				h := fnv.New32a()
				h.Write(r.Key)
				want = int(h.Sum32() % uint32(childParts))
			case keepIndex:
				want = parentPartition
			default:
				turn++
				want = int(turn % uint64(childParts))
			}
			if placed[i] != want {
				rt.Fatalf("record %d (key %q, child %d parts, parent %d/%d parts) in partition %d, want %d",
					i, r.Key, childParts, parentPartition, parentParts, placed[i], want)
			}
		}
		if rr.Load() != turn {
			rt.Fatalf("rotation moved %d turns, want one per keyless record placed round-robin (%d)", rr.Load()-rr0, turn-rr0)
		}
	})
}
