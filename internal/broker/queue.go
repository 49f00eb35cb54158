package broker

import (
	"strconv"
	"time"

	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/meta"
)

func limitsOf(t meta.Topic) lease.Limits {
	return lease.Limits{
		VisibilityTimeout: time.Duration(t.VisibilityTimeoutMs) * time.Millisecond,
		MaxInFlight:       t.MaxInFlight,
		MaxAckedAhead:     t.MaxAckedAhead,
		MaxDeliveries:     maxDeliveriesOf(t),
	}
}

// queue returns the partition's queue (package partition loads it on
// first use), its limits kept in step with the topic record.
func (b *Broker) queue(t meta.Topic, p int) (*hosted.Queue, error) {
	return b.parts.Queue(t.Name, p, t.Version, limitsOf(t))
}

func partLabel(p int) string { return strconv.Itoa(p) }
