package broker

import (
	"github.com/narad-io/narad/internal/replica"
	"github.com/narad-io/narad/internal/storage"
)

// holdOptions makes a partition log open held (storage.Options.Held):
// commits are durable on return but visible only once released.
func holdOptions(opts *storage.Options) { opts.Held = true }

// A held partition log is what the replication engine drives.
var _ replica.Log = (*storage.Log)(nil)
