package replica_test

import (
	"github.com/narad-io/narad/internal/replica"
	"github.com/narad-io/narad/internal/storage"
)

var _ replica.Log = (*storage.Log)(nil)
