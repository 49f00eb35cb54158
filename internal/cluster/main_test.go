package cluster

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test stops the nodes it runs; goleak proves nothing is left.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
