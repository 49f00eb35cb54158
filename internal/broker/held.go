package broker

import (
	"github.com/narad-io/narad/internal/replica"
	"github.com/narad-io/narad/internal/storage"
)

// A held partition log (storage.Options.Held, opened so by package hosted
// for a partition replicated here) is what the replication engine drives.
var _ replica.Log = (*storage.Log)(nil)
