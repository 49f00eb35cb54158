package broker

import (
	"strconv"

	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/meta"
)

// queue returns the partition's queue (package hosted loads it on first
// use), its limits kept in step with the topic record.
func (b *Broker) queue(t meta.Topic, p int) (*hosted.Queue, error) {
	return b.parts.Queue(t.Name, p, t.Version, hosted.LimitsOf(t))
}

func partLabel(p int) string { return strconv.Itoa(p) }
