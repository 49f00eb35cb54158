package replica

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/narad-io/narad/internal/meta"
)

// memMeta is one partition's placement in a metastore, applying
// replication's commands with the checks meta applies: SetInSync only by
// the current leader at its epoch and never below a majority, StartEpoch
// once per epoch by its leader, ElectLeader only of a live in-sync member
// (epoch+1, the old leader leaves the in-sync set). EpochStarts keeps the
// last maxStarts, as meta trims it.
//
// wiped stands in for a disk identity the metastore would need to know
// (see the report): a node whose disk was replaced is not electable, and
// no leader adds it to the in-sync set until that leader has had a fetch
// from the new disk (confirmed) — as if fetches carried the disk's id and
// SetInSync named the ids it saw. Once added it is whole again.
type memMeta struct {
	mu        sync.Mutex
	a         meta.Assignment
	alive     func(string) bool
	confirmed func(string) bool
	wiped     map[string]bool
	maxStarts int
	// breakage switches, for seeing the property fail (never set in the
	// suite)
	allowBelowMajority, electOutOfSync bool
}

var errRefused = errors.New("memmeta: refused")

func newMemMeta(nodes []string, alive, confirmed func(string) bool) *memMeta {
	return &memMeta{a: meta.Assignment{Topic: "t", Partition: 0, Owner: nodes[0], Replicas: slices.Clone(nodes),
		InSync: slices.Clone(nodes), LeaderEpoch: 1, EpochStarts: []meta.EpochStart{{Epoch: 1, Offset: 0}}},
		alive: alive, confirmed: confirmed, wiped: map[string]bool{}, maxStarts: 32}
}

func (m *memMeta) view() View {
	m.mu.Lock()
	defer m.mu.Unlock()
	return cloneView(ViewOf(1, m.a))
}

func (m *memMeta) SetInSync(_ context.Context, topic string, partition int, epoch uint64, leader string, inSync []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if topic != m.a.Topic || partition != m.a.Partition || epoch != m.a.LeaderEpoch || leader != m.a.Owner ||
		!slices.Contains(inSync, leader) || (len(inSync) < meta.Majority(len(m.a.Replicas)) && !m.allowBelowMajority) {
		return errRefused
	}
	for _, n := range inSync {
		if !slices.Contains(m.a.Replicas, n) {
			return errRefused
		}
		if m.wiped[n] && !slices.Contains(m.a.InSync, n) && !m.confirmed(n) {
			return errRefused
		}
	}
	for _, n := range inSync {
		if m.wiped[n] && !slices.Contains(m.a.InSync, n) {
			delete(m.wiped, n)
		}
	}
	m.a.InSync = slices.Clone(inSync)
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

func (m *memMeta) electLeader(candidate string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if candidate == m.a.Owner || !slices.Contains(m.a.Replicas, candidate) || !m.alive(candidate) {
		return errRefused
	}
	if !m.electOutOfSync && (!slices.Contains(m.a.InSync, candidate) || m.wiped[candidate]) {
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

// markWiped records that n's disk was replaced.
func (m *memMeta) markWiped(n string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.wiped[n] = true
}

func (m *memMeta) isWiped(n string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.wiped[n]
}

func (m *memMeta) wipedCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.wiped)
}
