package broker

import (
	"sync/atomic"

	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
)

// admin is topic administration on this node: validate a request, then
// commit a metastore command (topics.go, schema.go, deadpolicy.go), list
// and view topics, adopt topic data found on disk, and clear the data of
// topics that are gone (janitor.go). Broker embeds it; it reaches the data
// plane only to delete a topic's data (the hosted partitions) and, through
// forget, to drop what the broker keeps in memory for a deleted topic.
type admin struct {
	cfg   *Config // the broker's: one configuration
	meta  *meta.Store
	m     *metrics.Metrics
	parts *hosted.Set
	// forget drops a deleted topic's in-memory state (Broker.forgetTopic).
	forget func(topic string)

	// schemas are compiled once per document; produce validates with them.
	schemas schemaCache

	// createOpen is the create gate of the boot order (docs/architecture.md,
	// "Start and shutdown"): closed until the startup reconcile has swept
	// orphan directories, so a topic cannot be created over data that is
	// about to be judged.
	createOpen atomic.Bool
}
