package fanout

import (
	"sync/atomic"

	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/topic"
)

// bucketize splits a slab by child partition with a counting sort, so each
// bucket keeps slab order — and with it per-key order (rule: slab order per
// bucket).
//
//   - keyed: FNV-1a 32 of the key modulo the child's partition count;
//   - keyless, when the child has the parent's partition count: the parent
//     partition's own index (keylessKeepsIndex). Child partition p is
//     placed away from the owner of parent partition p, so a replica
//     child's two copies land on different nodes, as keyed records do;
//   - keyless otherwise: the child's round-robin rotation (one per child
//     topic), placed afresh on each retry. No key is ever invented.
//
// The result is indexed by child partition; empty buckets are nil.
func bucketize(recs []storage.Record, childParts, parentParts, parentPartition int, rr *atomic.Uint64) [][]storage.Record {
	dest := make([]int32, len(recs))
	counts := make([]int, childParts)
	keepIndex := childParts == parentParts && parentPartition < childParts
	for i := range recs {
		var p int
		switch {
		case len(recs[i].Key) > 0:
			p = topic.KeyPartition(recs[i].Key, childParts)
		case keepIndex:
			p = parentPartition
		default:
			p = int(rr.Add(1) % uint64(childParts))
		}
		dest[i] = int32(p)
		counts[p]++
	}
	out := make([][]storage.Record, childParts)
	for p, n := range counts {
		if n > 0 {
			out[p] = make([]storage.Record, 0, n)
		}
	}
	for i := range recs {
		out[dest[i]] = append(out[dest[i]], storage.Record{Key: recs[i].Key, Payload: recs[i].Payload, Headers: recs[i].Headers})
	}
	checkBuckets(recs, dest, out)
	return out
}

// detach copies records off the parent log's decoded frames, so records
// held across a long outage do not pin read buffers (rules: retry alone,
// held records bounded). Offsets and commit times are kept: a refused
// record is named by its parent offset (rule: refusal stops the link), and
// a remote link's recovery point is a commit time (rule: acked time).
// Headers are shared, not copied: their strings never alias a frame buffer
// (storage decodes them into their own allocation).
func detach(recs []storage.Record) []storage.Record {
	size := 0
	for i := range recs {
		size += len(recs[i].Key) + len(recs[i].Payload)
	}
	buf := make([]byte, 0, size)
	out := make([]storage.Record, len(recs))
	for i, r := range recs {
		start := len(buf)
		buf = append(buf, r.Key...)
		k := buf[start:len(buf):len(buf)]
		if len(r.Key) == 0 {
			k = nil
		}
		start = len(buf)
		buf = append(buf, r.Payload...)
		out[i] = storage.Record{Offset: r.Offset, CommittedAt: r.CommittedAt, Key: k, Payload: buf[start:len(buf):len(buf)], Headers: r.Headers}
	}
	return out
}
