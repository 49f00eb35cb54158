package server

import (
	"testing"

	"github.com/narad-io/narad/internal/config"
	"github.com/narad-io/narad/internal/meta"
)

// The configured defaults and the users API take the same bounds: a
// default the API would refuse for a user must not start a node.
func TestLimitBoundsAgree(t *testing.T) {
	m := config.MaxLimits
	got := map[string]int64{meta.LimitProduceRecords: m.ProduceRecordsPerS,
		meta.LimitProduceBytes: m.ProduceBytesPerS, meta.LimitConsumeRequests: m.ConsumeRequestsPerS}
	for name, max := range meta.MaxRate {
		if got[name] != max {
			t.Errorf("%s: config bounds it at %d, the users API at %d", name, got[name], max)
		}
	}
}

// NARAD_ADMIN_PASSWORD seeds the root admin through the users API's
// rules, so config bounds it as meta does: config restates the bounds
// (it sits below meta), and this holds the two copies together.
func TestPasswordBoundsAgree(t *testing.T) {
	if config.MinPasswordBytes != meta.MinPasswordBytes || config.MaxPasswordBytes != meta.MaxPasswordBytes {
		t.Errorf("config bounds NARAD_ADMIN_PASSWORD at %d..%d bytes, the users API a password at %d..%d",
			config.MinPasswordBytes, config.MaxPasswordBytes, meta.MinPasswordBytes, meta.MaxPasswordBytes)
	}
}
