package cluster

import (
	"slices"

	"github.com/narad-io/narad/internal/meta"
)

// replicate places partitions [from, to) of a replicated topic: partition
// p's leader is the node single-copy placement would pick, its followers
// the next live nodes round robin, min(rf, live) distinct nodes in all,
// leader first; the in-sync set is all of them (every log is empty),
// epoch 1 starting at offset 0.
//
// A child created with its parent keeps its copies off the nodes of the
// parent partition's copies (its replicas, or its owner) as long as
// enough other live nodes exist; only the remainder shares nodes with the
// parent (docs/replication.md: anti-affine where possible). An unplaced
// parent partition defers the child's, as for a single copy.
func replicate(topic string, from, to, rf int, live []string, parent []meta.Assignment) []meta.Assignment {
	out := make([]meta.Assignment, 0, max(to-from, 0))
	n := min(rf, len(live))
	if n == 0 {
		for p := from; p < to; p++ {
			out = append(out, meta.Assignment{Topic: topic, Partition: p})
		}
		return out
	}
	start := startOf(topic, len(live))
	for p := from; p < to; p++ {
		var avoid []string
		if parent != nil {
			switch owner := parentOwner(parent, p); owner {
			case "":
				out = append(out, meta.Assignment{Topic: topic, Partition: p})
				continue
			case "-":
			default:
				avoid = parent[p].Replicas
				if len(avoid) == 0 {
					avoid = []string{owner}
				}
			}
		}
		i := (start + p) % len(live)
		var picked []string
		// First the nodes to keep, in rotation from i; then, if too few,
		// the avoided ones in the same rotation.
		for _, pass := range []bool{false, true} {
			for k := 0; k < len(live) && len(picked) < n; k++ {
				id := live[(i+k)%len(live)]
				if slices.Contains(avoid, id) == pass && !slices.Contains(picked, id) {
					picked = append(picked, id)
				}
			}
		}
		out = append(out, meta.Assignment{Topic: topic, Partition: p, Owner: picked[0], Replicas: picked,
			InSync: slices.Clone(picked), LeaderEpoch: 1, EpochStarts: []meta.EpochStart{{Epoch: 1, Offset: 0}}})
	}
	return out
}
