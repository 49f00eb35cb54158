package replica

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/narad-io/narad/internal/meta"
)

// memMeta is one partition's placement in a metastore. SetInSync applies
// meta's own rule (meta.SetInSyncCmd.Apply) against the disks recorded
// here; StartEpoch once per epoch by its leader; RenewEpoch by meta.RenewEpochCmd.Apply; ElectLeader only of a
// live in-sync member (epoch+1, the old leader leaves the in-sync set);
// replaceDisk records a node's new disk and takes it out of the in-sync
// set, even below a majority (meta.ReplaceDisk, which the controller
// applies before it counts the node's first heartbeat from that disk).
// EpochStarts keeps the last maxStarts, as meta trims it.
type memMeta struct {
	mu        sync.Mutex
	a         meta.Assignment
	alive     func(string) bool
	disks     map[string]string // recorded disk ids (meta.Member.DiskID)
	maxStarts int
	renewals  int // epochs a leader renewed (RenewEpoch), to see the model reach them
	// breakage switches, for seeing the property fail (never set in the
	// suite)
	electOutOfSync, ignoreDisks, keepReplacedInSync bool
}

var errRefused = errors.New("memmeta: refused")

// newMemMeta places the partition on nodes, each recorded on its first
// disk, diskOf(node, 0).
func newMemMeta(nodes []string, alive func(string) bool) *memMeta {
	m := &memMeta{a: meta.Assignment{Topic: "t", Partition: 0, Owner: nodes[0], Replicas: slices.Clone(nodes),
		InSync: slices.Clone(nodes), LeaderEpoch: 1, EpochStarts: []meta.EpochStart{{Epoch: 1, Offset: 0}}},
		alive: alive, disks: map[string]string{}, maxStarts: 32}
	for _, n := range nodes {
		m.disks[n] = diskOf(n, 0)
	}
	return m
}

// diskOf is node's disk id after wipes wipes.
func diskOf(node string, wipes int) string { return fmt.Sprintf("%s.disk%d", node, wipes) }

func (m *memMeta) view() View {
	m.mu.Lock()
	defer m.mu.Unlock()
	return cloneView(ViewOf(1, m.a))
}

func (m *memMeta) SetInSync(_ context.Context, c meta.SetInSyncCmd) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.Topic != m.a.Topic || c.Partition != m.a.Partition {
		return errRefused
	}
	next, err := c.Apply(m.a, func(n string) (string, error) {
		if m.ignoreDisks {
			return "", nil // as if no disk were recorded: the upgrade gap
		}
		return m.disks[n], nil
	})
	if err != nil {
		return fmt.Errorf("%w: %w", errRefused, err)
	}
	m.a = next
	return nil
}

func (m *memMeta) StartEpoch(_ context.Context, topic string, partition int, epoch uint64, leader string, offset uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if topic != m.a.Topic || partition != m.a.Partition || epoch != m.a.LeaderEpoch || leader != m.a.Owner {
		return errRefused
	}
	if _, ok := startOf(m.a.EpochStarts, epoch); ok {
		return errRefused
	}
	m.a.EpochStarts = append(m.a.EpochStarts, meta.EpochStart{Epoch: epoch, Offset: offset})
	if len(m.a.EpochStarts) > m.maxStarts {
		m.a.EpochStarts = slices.Clone(m.a.EpochStarts[len(m.a.EpochStarts)-m.maxStarts:])
	}
	return nil
}

func (m *memMeta) RenewEpoch(_ context.Context, topic string, partition int, epoch uint64, leader string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if topic != m.a.Topic || partition != m.a.Partition {
		return errRefused
	}
	next, err := meta.RenewEpochCmd{Topic: topic, Partition: partition, Epoch: epoch, Leader: leader}.Apply(m.a)
	if err != nil {
		return fmt.Errorf("%w: %w", errRefused, err)
	}
	m.a = next
	m.renewals++
	return nil
}

func (m *memMeta) electLeader(candidate string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if candidate == m.a.Owner || !slices.Contains(m.a.Replicas, candidate) || !m.alive(candidate) {
		return errRefused
	}
	if !m.electOutOfSync && !slices.Contains(m.a.InSync, candidate) {
		return errRefused
	}
	old := m.a.Owner
	m.a.Owner = candidate
	m.a.LeaderEpoch++
	m.a.InSync = slices.DeleteFunc(slices.Clone(m.a.InSync), func(n string) bool { return n == old })
	if !slices.Contains(m.a.InSync, candidate) {
		m.a.InSync = append(m.a.InSync, candidate) // only when breaking the rule
	}
	return nil
}

// replaceDisk records that n now runs on disk and takes it out of the
// in-sync set (meta.ReplaceDisk).
func (m *memMeta) replaceDisk(n, disk string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.disks[n] == disk {
		return
	}
	m.disks[n] = disk
	if !m.keepReplacedInSync {
		m.a.InSync = slices.DeleteFunc(slices.Clone(m.a.InSync), func(id string) bool { return id == n })
	}
}
