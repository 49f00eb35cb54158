package server

import (
	"testing"

	"go.uber.org/goleak"
)

// A node's goroutines all end with Run (TestRunLeavesNoGoroutine checks
// each start and stop); goleak checks the package's tests as a whole.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
