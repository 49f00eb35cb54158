package storage

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's test run if any goroutine outlives the
// tests: every goroutine this package starts must be stopped by its Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
