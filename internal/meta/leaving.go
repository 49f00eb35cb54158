package meta

import "slices"

// A copy leaving a replicated partition (Assignment.Leaving). The
// controller moves a copy to another node as a decommission does —
// replacement first, in sync, leadership handed over, then removal — over
// several commands; between the first and the last the partition holds
// one copy more than its factor, with the replacement out of sync while
// it catches up. A factor lowered by the user leaves the same shape, and
// there the out-of-sync copy is the one to drop. The mark tells the two
// apart in the metastore itself, so any controller, at any tick, reads
// which copy goes: the one marked, never the replacement.
//
// The rule, checked where SetReplicas applies:
//   - a copy starts leaving only in the change that adds its replacement:
//     the replicas grow, none leaves, and the copy is one of them already
//     (of a replicated partition: a single copy moves by a move);
//   - one copy leaves at a time: a change naming another while one is
//     marked is refused;
//   - while the copy is listed, a change must name it (a change that does
//     not — a controller unaware of the move — would treat the
//     replacement as a surplus copy): the mark is cleared only by the
//     change that removes the copy, or by one that keeps the replicas as
//     they are (the move called off);
//   - the leaving copy is never the partition's only copy.
//
// Other commands keep the mark: an election (the leaving copy may still
// be elected by a failover when it is the only in-sync copy heard), a
// replaced disk.

// checkLeaving checks the mark c sets, keeps or clears on cur, whose
// replicas now are replicas.
func (c SetReplicasCmd) checkLeaving(cur Assignment, replicas []string) error {
	switch {
	case c.Leaving == "" && cur.Leaving == "":
		return nil
	case c.Leaving == "":
		if slices.Contains(c.Replicas, cur.Leaving) && !slices.Equal(c.Replicas, replicas) {
			return topicErr(c.Topic, ErrConflict, "partition %d: %q is leaving; a change that keeps it must name it",
				c.Partition, cur.Leaving)
		}
		return nil // it left, or the move is called off
	case cur.Leaving != "" && c.Leaving != cur.Leaving:
		return topicErr(c.Topic, ErrConflict, "partition %d: %q is leaving already, not %q", c.Partition, cur.Leaving, c.Leaving)
	case !cur.Replicated():
		return topicErr(c.Topic, ErrInvalid, "partition %d: a single copy moves by a move, not by a leaving copy", c.Partition)
	case !slices.Contains(replicas, c.Leaving) || !slices.Contains(c.Replicas, c.Leaving):
		return topicErr(c.Topic, ErrInvalid, "partition %d: leaving copy %q is not a replica before and after the change",
			c.Partition, c.Leaving)
	case len(c.Replicas) < 2:
		return topicErr(c.Topic, ErrInvalid, "partition %d: leaving copy %q would be the only copy", c.Partition, c.Leaving)
	case cur.Leaving == "" && (len(c.Replicas) <= len(replicas) || !subset(replicas, c.Replicas)):
		return topicErr(c.Topic, ErrInvalid, "partition %d: a copy starts leaving only in the change that adds its replacement (%v to %v)",
			c.Partition, replicas, c.Replicas)
	}
	return nil
}
