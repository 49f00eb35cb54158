package server

import (
	"log/slog"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/config"
	"github.com/narad-io/narad/internal/rpc"
)

// networkWarnEvery is how often, at most, one member's mismatch is logged.
const networkWarnEvery = time.Minute

// networkCheck warns when a heartbeat comes from a node on another
// cluster.network than this one's. Every node must run the same timings:
// a controller waits its own failover delay for a leader that fences
// itself after its own lease, and a lan controller would replace a wan
// leader that still serves. It only warns: refusing the heartbeat would
// fence the other node, or every node when this one is the odd one out.
type networkCheck struct {
	own string
	log *slog.Logger

	mu     sync.Mutex
	warned map[string]time.Time // member id -> when its mismatch was last logged
}

func newNetworkCheck(own string, log *slog.Logger) *networkCheck {
	return &networkCheck{own: networkOf(own), log: log, warned: map[string]time.Time{}}
}

// networkOf is a heartbeat's network: "" from nodes before the setting,
// which run lan's timings.
func networkOf(s string) string {
	if s == "" {
		return config.NetworkLAN
	}
	return s
}

// note logs m's network if it differs from this node's, at most every
// networkWarnEvery per member; it reports whether they differ.
func (c *networkCheck) note(m rpc.Member, now time.Time) bool {
	theirs := networkOf(m.Network)
	if theirs == c.own {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if last, ok := c.warned[m.ID]; ok && now.Sub(last) < networkWarnEvery {
		return true
	}
	c.warned[m.ID] = now
	c.log.Warn("a member runs on another cluster.network than this node: set the same value on every node (docs/cluster.md, \"Slow networks\")",
		"member", m.ID, "its_network", theirs, "this_network", c.own)
	return true
}
