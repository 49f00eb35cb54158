package broker

import (
	"time"

	"github.com/narad-io/narad/internal/hosted"
)

// OffsetAtTime is the first offset of topic/p whose commit time is at or
// after at (Kafka's offsets-for-times): the partition's oldest retained
// offset when at precedes every record, its high watermark when no record
// is that new. It is found by bisection over the log's segments and their
// indexes (storage.Log.OffsetAtTime), never by reading the partition. It
// takes no lease and changes no queue state; the partition must be served
// here (its owner, and for a replicated one its ready leader).
func (b *Broker) OffsetAtTime(topic string, p int, at time.Time) (uint64, error) {
	if err := b.servedPartition(topic, p); err != nil {
		return 0, err
	}
	l, err := b.parts.Get(topic, p)
	if err != nil {
		return 0, err
	}
	o, err := l.OffsetAtTime(at)
	if err != nil {
		return 0, hosted.StorageErr(topic, p, "be read", err)
	}
	return o, nil
}
