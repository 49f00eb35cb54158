package hosted

import (
	"cmp"
	"slices"
	"time"
)

// UnreachableLeader is a replicated partition hosted here as a follower
// whose leader its fetches have not reached since Since. The node sends
// the list with its heartbeat: the controller moves a leadership once a
// majority of a partition's copies report its leader so (package
// cluster, docs/replication-faults.md, "A leader its followers cannot reach").
type UnreachableLeader struct {
	Topic     string
	Partition int
	Leader    string
	Epoch     uint64
	Since     time.Time
}

// Unreachable lists the partitions followed here whose leader the
// follower has not reached, by topic and partition.
func (r *Roles) Unreachable() []UnreachableLeader {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []UnreachableLeader
	for k, h := range r.running {
		if h.follower == nil {
			continue
		}
		if u, ok := h.follower.Unreachable(); ok {
			out = append(out, UnreachableLeader{Topic: k.Topic, Partition: k.Partition, Leader: u.Leader, Epoch: u.Epoch, Since: u.Since})
		}
	}
	slices.SortFunc(out, func(a, b UnreachableLeader) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}
