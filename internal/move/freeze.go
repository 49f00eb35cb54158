package move

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/vfs"
)

// Freezes is this node's table of move freezes: a frozen partition takes
// no commit (the broker asks Admit before each one), while consume is
// still served. It is the broker's commit-admission hook.
//
// A freeze is also written down (the "moving" marker file in the
// partition directory) and lifts only explicitly: by the session that set
// it last, when its move failed before the flip (Source), or — once its
// TTL has passed on this node's clock — when the leader confirms this node
// still owns the partition (Worker). A successful move never lifts it: the
// copy here is stale from the flip on, and must not take a commit even if
// this node's replica has not applied the flip yet, or restarts from an
// older view. The freeze goes with the copy (forget, when it is dropped or
// replaced).
type Freezes struct {
	clock clock.Clock
	fs    vfs.FS

	mu    sync.Mutex
	gates map[key]*gate
}

// gate serialises commits against a freeze: commits hold it shared, a
// freeze takes it exclusively once, so that when a freeze returns no commit
// is in flight and none can start until it lifts.
type gate struct {
	mu     sync.RWMutex
	frozen bool
	until  time.Time
	holder string // the session that froze it last ("" after a restart)
	gen    uint64 // bumped by every freeze: an expiry sweep lifts only the freeze it saw
}

type key struct {
	topic string
	p     int
}

// movingMarker marks a frozen partition directory across restarts.
const movingMarker = "moving"

// NewFreezes is an empty table on clock c (nil: the system clock) writing
// its markers through fsys (nil: the real disk). A Source loads the
// markers found on disk (NewSource) before the node takes commits.
func NewFreezes(c clock.Clock, fsys vfs.FS) *Freezes {
	return &Freezes{clock: clock.Or(c), fs: vfs.Or(fsys), gates: map[key]*gate{}}
}

func (f *Freezes) gate(topic string, p int) *gate {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := key{topic, p}
	g, ok := f.gates[k]
	if !ok {
		g = &gate{}
		f.gates[k] = g
	}
	return g
}

// Admit lets a commit into topic/p start unless the partition is frozen;
// done ends it (broker.Admission).
func (f *Freezes) Admit(topic string, p int) (done func(), ok bool) {
	g := f.gate(topic, p)
	g.mu.RLock()
	if g.frozen {
		g.mu.RUnlock()
		return nil, false
	}
	return g.mu.RUnlock, true
}

// freeze freezes topic/p (directory dir) until ttl from now for holder;
// again renews, and makes holder the one whose thaw counts. The marker is
// on disk before the freeze holds.
func (f *Freezes) freeze(topic string, p int, dir string, ttl time.Duration, holder string) error {
	g := f.gate(topic, p)
	g.mu.Lock() // waits out the commits in flight
	defer g.mu.Unlock()
	if !g.frozen {
		if err := f.fs.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := f.writeMarker(dir); err != nil {
			return err
		}
	}
	g.frozen, g.until, g.holder = true, f.clock.Now().Add(ttl), holder
	g.gen++
	return nil
}

// thaw lifts the freeze holder set last; one set or renewed since by
// another session stays (a cancelled session's late thaw must not open a
// partition that a newer move is about to flip). The caller has the
// leader's confirmation that this node still owns the partition.
func (f *Freezes) thaw(topic string, p int, dir, holder string) (bool, error) {
	g := f.gate(topic, p)
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.frozen || g.holder != holder {
		return false, nil
	}
	return true, f.lift(g, dir)
}

// expiredFreeze is a freeze an expiry sweep saw past its TTL.
type expiredFreeze struct {
	topic string
	p     int
	gen   uint64
}

// expired lists the freezes whose TTL has passed: each may be lifted once
// the leader confirms this node still owns the partition.
func (f *Freezes) expired() []expiredFreeze {
	f.mu.Lock()
	gates := make(map[key]*gate, len(f.gates))
	for k, g := range f.gates {
		gates[k] = g
	}
	f.mu.Unlock()
	now := f.clock.Now()
	var out []expiredFreeze
	for k, g := range gates { // not under f.mu: a gate's lock waits for a commit's fsync
		g.mu.RLock()
		if g.frozen && !now.Before(g.until) {
			out = append(out, expiredFreeze{topic: k.topic, p: k.p, gen: g.gen})
		}
		g.mu.RUnlock()
	}
	return out
}

// liftExpired lifts e if it is still that very freeze and still expired
// (not renewed meanwhile). The caller has the leader's confirmation that
// this node still owns the partition.
func (f *Freezes) liftExpired(e expiredFreeze, dir string) (bool, error) {
	g := f.gate(e.topic, e.p)
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.frozen || g.gen != e.gen || f.clock.Now().Before(g.until) {
		return false, nil
	}
	return true, f.lift(g, dir)
}

// lift removes the marker, then opens the gate; g.mu is held.
func (f *Freezes) lift(g *gate, dir string) error {
	if err := f.fs.Remove(filepath.Join(dir, movingMarker)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	g.frozen, g.until, g.holder = false, time.Time{}, ""
	return nil
}

// load re-freezes topic/p if its directory carries the marker: a freeze
// survives a restart, already expired (it lifts only with the leader's
// confirmation). A marker that cannot be checked is an error: taking it
// for absent would let a stale copy take commits.
func (f *Freezes) load(topic string, p int, dir string) error {
	path := filepath.Join(dir, movingMarker)
	_, err := f.fs.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("move: checking the freeze marker %s: %w", path, err)
	}
	g := f.gate(topic, p)
	g.mu.Lock()
	g.frozen = true
	g.mu.Unlock()
	return nil
}

// forget drops topic/p's freeze with its directory (removed, or replaced
// by an installed copy that carries no marker).
func (f *Freezes) forget(topic string, p int) {
	f.mu.Lock()
	delete(f.gates, key{topic, p})
	f.mu.Unlock()
}

func (f *Freezes) writeMarker(dir string) error {
	m, err := vfs.Create(f.fs, filepath.Join(dir, movingMarker))
	if err != nil {
		return err
	}
	if err := m.Sync(); err != nil {
		m.Close()
		return err
	}
	if err := m.Close(); err != nil {
		return err
	}
	return f.fs.SyncDir(dir)
}
