package replica

import (
	"fmt"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/storage"
)

// TruncationPoint is where a replica cuts its log before it fetches in
// epoch current (Kafka's leader-epoch truncation, KIP-101/279, with the
// epoch history in the metastore): lastEpoch is the last epoch it wrote
// records in (its replica.state), end its durable end, committed the
// highest committed point it knows (its checkpoint, or its visible high
// watermark if that is higher), starts the placement's EpochStarts
// (ascending).
//
// A replica that wrote in the current epoch (or in a later one: its view
// is behind, and the fetch will be refused) cuts nothing; nor does one
// that never wrote in a replicated epoch (lastEpoch 0: every replica
// marks an epoch before its first record in it), whose records, if any,
// are the partition's history from before it was replicated (a
// replication factor raised on a partition with records: its leader must
// be the old owner). Otherwise every
// record it holds was written in an epoch <= lastEpoch, and each later
// epoch's leader held, when it began, only the records below its start:
// the cut is the lowest start of the epochs after lastEpoch (not the
// first one's: a later leader may have begun with less, when it never
// fetched from the one before it), and the records there and past it
// are the ones that may differ, never acknowledged. When the history no longer reaches back far enough (the
// oldest start kept is later than lastEpoch+1, so a start between them
// may have been trimmed) it cuts at committed: the records below it are
// the same everywhere. The result is never below committed (only a
// never-acknowledged tail is cut) and never above end.
func TruncationPoint(lastEpoch, end, committed, current uint64, starts []meta.EpochStart) uint64 {
	if lastEpoch >= current || lastEpoch == 0 {
		return end
	}
	cut := end
	switch {
	case len(starts) == 0:
		// Nothing recorded yet: nothing is known to be divergent.
	case starts[0].Epoch > lastEpoch+1:
		cut = committed
	default:
		for _, s := range starts {
			if s.Epoch > lastEpoch {
				cut = min(cut, s.Offset)
			}
		}
	}
	if cut < committed {
		cut = committed
	}
	if cut > end {
		cut = end
	}
	return cut
}

// cutForEpoch cuts log by TruncationPoint before a replica whose last
// epoch written is st.LastEpoch works in v's epoch (as its leader or its
// follower): the committed floor is the later of its checkpoint and its
// visible high watermark.
func cutForEpoch(log Log, st storage.ReplicaState, v View) error {
	end := log.End()
	cut := TruncationPoint(st.LastEpoch, end, max(st.Committed, log.HWM()), v.Epoch, v.EpochStarts)
	if cut >= end {
		return nil
	}
	if err := log.TruncateTo(cut); err != nil {
		return fmt.Errorf("replica: %s/%d: cutting at %d for epoch %d: %w", v.Topic, v.Partition, cut, v.Epoch, err)
	}
	return nil
}
