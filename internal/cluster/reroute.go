package cluster

import "github.com/narad-io/narad/internal/meta"

// RerouteAfter is how many failed dispatch passes in a row send a
// destination's records to a sibling partition (docs/architecture.md, "The
// produce path").
const RerouteAfter = 3

// Rerouter is produce dispatch's reroute policy: records whose partition
// owner is dead in membership, or that failed RerouteAfter passes in a
// row, go to a live sibling partition of the same topic. Produce stays
// available while an owner is down; ordering is not promised.
type Rerouter struct {
	Self string
	Meta *meta.Store
}

// Reroute names the sibling for records of topic/p after failedPasses
// failed passes: the next partition (wrapping) whose owner is another
// node, and this one or alive; ok=false keeps the records waiting for
// their own partition.
func (r Rerouter) Reroute(topic string, p int32, failedPasses int) (sibling int32, ok bool) {
	dir := Directory{Meta: r.Meta}
	owner, _ := r.Meta.Owner(topic, int(p))
	dead := owner != "" && !dir.Alive(owner)
	if !dead && failedPasses < RerouteAfter {
		return 0, false
	}
	t, found := r.Meta.Topic(topic)
	if !found {
		return 0, false
	}
	for i := 1; i < t.Partitions; i++ {
		q := (int(p) + i) % t.Partitions
		o, _ := r.Meta.Owner(topic, q)
		if o != "" && o != owner && (o == r.Self || dir.Alive(o)) {
			return int32(q), true
		}
	}
	return 0, false
}
