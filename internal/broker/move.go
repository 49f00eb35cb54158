package broker

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/storage"
)

// The broker's side of partition moves (06-cluster.md Moves): a source
// freezes a partition (commits refused, consume still served), lists and
// serves its files; a destination installs a verified copy; a node that
// no longer owns a partition drops its copy (leader-confirmed, by the
// caller).

// gate serialises commits against a freeze: commits hold it shared, a
// freeze takes it exclusively once, so that when Freeze returns no commit
// is in flight and none can start until the freeze lifts.
//
// A freeze is also written down (the "moving" marker file in the partition
// directory) and lifts only explicitly: by the destination when its move
// failed before the flip, or — once its TTL has passed — when the leader
// confirms this node still owns the partition (LiftExpired's caller). A
// successful move never lifts it: the copy here is stale from the flip on,
// and must not take a commit even if this node's replica has not applied
// the flip yet, or restarts from an older view.
type gate struct {
	mu     sync.RWMutex
	frozen bool
	until  time.Time
	holder string // the move session that froze it last ("" after a restart)
	gen    uint64 // bumped by every freeze: an expiry sweep lifts only the freeze it saw
}

// movingMarker marks a frozen partition directory across restarts.
const movingMarker = "moving"

func (b *Broker) gate(topic string, p int) *gate {
	b.gmu.Lock()
	defer b.gmu.Unlock()
	k := partKey{topic, p}
	g, ok := b.gates[k]
	if !ok {
		g = &gate{}
		b.gates[k] = g
	}
	return g
}

// enterCommit admits a commit unless the partition is frozen; the caller
// must call the returned func when the commit is done.
func (b *Broker) enterCommit(topic string, p int) (func(), error) {
	g := b.gate(topic, p)
	g.mu.RLock()
	if g.frozen {
		g.mu.RUnlock()
		return nil, apierr.Unavailable(time.Second, "partition %d of %q is being moved; retry", p, topic)
	}
	return g.mu.RUnlock, nil
}

// Freeze refuses commits into topic/p, for at least ttl, on behalf of
// holder (a move session); calling it again renews. The
// dispatcher and fan-out keep their records and commit them at the new
// owner after the flip. It returns the partition's high watermark, fixed
// while the freeze holds; the consumer frontier is written first so the
// copy carries it.
func (b *Broker) Freeze(topic string, p int, ttl time.Duration, holder string) (uint64, error) {
	if !b.owned(topic, p) {
		return 0, apierr.Unavailable(time.Second, "partition %d of %q is not owned by this node", p, topic)
	}
	dir, err := b.reg.Dir(topic, p)
	if err != nil {
		return 0, err
	}
	g := b.gate(topic, p)
	g.mu.Lock()
	if !g.frozen {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			g.mu.Unlock()
			return 0, err
		}
		if err := writeMarker(filepath.Join(dir, movingMarker)); err != nil {
			g.mu.Unlock()
			return 0, err
		}
	}
	g.frozen, g.until, g.holder = true, time.Now().Add(ttl), holder
	g.gen++
	g.mu.Unlock()
	if q := b.peekQueue(topic, p); q != nil {
		if err := q.persist(); err != nil {
			return 0, err
		}
	}
	l, err := b.reg.Get(topic, p)
	if err != nil {
		return 0, err
	}
	return l.HWM(), nil
}

// Thaw lifts the freeze that holder set — a move that gave up before its
// flip. A freeze set (or renewed) since by another session stays: a
// cancelled session's late thaw must not open a partition that a newer
// move is about to flip. The caller must have the leader's confirmation
// that this node still owns the partition.
func (b *Broker) Thaw(topic string, p int, holder string) (bool, error) {
	g := b.gate(topic, p)
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.frozen || g.holder != holder {
		return false, nil
	}
	return true, b.lift(topic, p, g)
}

// LiftExpired lifts a freeze found expired at generation gen, if it is
// still that freeze and still expired (not renewed meanwhile). The caller
// must have the leader's confirmation that this node still owns the
// partition.
func (b *Broker) LiftExpired(r PartitionRef) (bool, error) {
	g := b.gate(r.Topic, r.Partition)
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.frozen || g.gen != r.gen || time.Now().Before(g.until) {
		return false, nil
	}
	return true, b.lift(r.Topic, r.Partition, g)
}

// lift removes the marker and opens the gate; g.mu is held.
func (b *Broker) lift(topic string, p int, g *gate) error {
	dir, err := b.reg.Dir(topic, p)
	if err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, movingMarker)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	g.frozen, g.until, g.holder = false, time.Time{}, ""
	return nil
}

func writeMarker(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// ExpiredFreezes lists frozen partitions whose TTL has passed: each may be
// lifted once the leader confirms this node still owns it.
func (b *Broker) ExpiredFreezes() []PartitionRef {
	b.gmu.Lock()
	gates := make(map[partKey]*gate, len(b.gates))
	for k, g := range b.gates {
		gates[k] = g
	}
	b.gmu.Unlock()
	now := time.Now()
	var out []PartitionRef
	for k, g := range gates { // not under gmu: a gate's lock waits for a commit's fsync
		g.mu.RLock()
		if g.frozen && !now.Before(g.until) {
			out = append(out, PartitionRef{Topic: k.topic, Partition: k.partition, gen: g.gen})
		}
		g.mu.RUnlock()
	}
	return out
}

// PartitionRef names a partition (and, from ExpiredFreezes, the freeze
// generation seen).
type PartitionRef struct {
	Topic     string
	Partition int
	gen       uint64
}

// loadFreezes re-freezes the partitions whose directory carries the
// moving marker (a freeze survives a restart, already expired: it lifts
// only with the leader's confirmation).
func (b *Broker) loadFreezes() {
	for topic, parts := range b.PartitionDirs() {
		for _, p := range parts {
			dir, err := b.reg.Dir(topic, p)
			if err != nil {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, movingMarker)); err == nil {
				b.gate(topic, p).frozen = true
			}
		}
	}
}

// PartitionFile is one file of a partition directory.
type PartitionFile struct {
	Name string
	Size int64
}

// PartitionFiles lists a partition's directory for a copy, with its high
// watermark. Only regular files: the directory holds nothing else.
func (b *Broker) PartitionFiles(topic string, p int) ([]PartitionFile, uint64, error) {
	if !b.owned(topic, p) {
		return nil, 0, apierr.Unavailable(time.Second, "partition %d of %q is not owned by this node", p, topic)
	}
	l, err := b.reg.Get(topic, p) // opens (and creates) the directory if needed
	if err != nil {
		return nil, 0, err
	}
	dir, _ := b.reg.Dir(topic, p)
	activeFile, published := l.Published() // before the listing: the segment can only grow after
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, err
	}
	var out []PartitionFile
	for _, e := range ents {
		// Skip temporaries of atomic writes (name.tmp<random>, renamed
		// away at any moment) and the freeze marker.
		if !e.Type().IsRegular() || strings.Contains(e.Name(), ".tmp") || e.Name() == movingMarker {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // deleted meanwhile (retention)
		}
		size := fi.Size()
		if e.Name() == activeFile {
			size = min(size, published) // only verified frames
		}
		out = append(out, PartitionFile{Name: e.Name(), Size: size})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, l.HWM(), nil
}

// ReadPartitionFile reads up to n bytes at off of one file of a partition
// directory. name must be a plain file name: nothing a caller sends can
// reach outside the directory.
func (b *Broker) ReadPartitionFile(topic string, p int, name string, off, n int64) ([]byte, error) {
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		return nil, apierr.BadRequest("move read: %q is not a file name", name)
	}
	if !b.owned(topic, p) {
		return nil, apierr.Unavailable(time.Second, "partition %d of %q is not owned by this node", p, topic)
	}
	dir, err := b.reg.Dir(topic, p)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, apierr.NotFound("move read: %s/%d has no file %q", topic, p, name)
		}
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	k, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:k], nil
}

// InstallPartition puts a verified copy in place of topic/p's directory:
// whatever was there (a stale copy from an earlier ownership) is closed
// and removed first; then one rename.
func (b *Broker) InstallPartition(topic string, p int, staged string) error {
	if b.owned(topic, p) {
		// This node serves the partition already (a move it completed
		// before): wiping it would lose what it took since.
		return apierr.Conflict("install %s/%d: this node owns it already", topic, p)
	}
	dir, err := b.reg.Dir(topic, p)
	if err != nil {
		return err
	}
	if err := syncDir(staged); err != nil { // the copy's entries, before it becomes the partition
		return err
	}
	b.forgetPartition(topic, p)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	if err := os.Rename(staged, dir); err != nil {
		return fmt.Errorf("install %s/%d: %w", topic, p, err)
	}
	return syncDir(filepath.Dir(dir))
}

// DropPartition closes and deletes this node's copy of topic/p. The caller
// must hold a leader confirmation that another node owns it.
func (b *Broker) DropPartition(topic string, p int) error {
	dir, err := b.reg.Dir(topic, p)
	if err != nil {
		return err
	}
	b.forgetPartition(topic, p)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dir))
}

// forgetPartition closes the partition's log and drops its queue state
// and any freeze (the directory, marker included, is about to go).
func (b *Broker) forgetPartition(topic string, p int) {
	b.reg.ClosePartition(topic, p)
	b.qmu.Lock()
	delete(b.queues, partKey{topic, p})
	b.qmu.Unlock()
	b.gmu.Lock()
	delete(b.gates, partKey{topic, p})
	b.gmu.Unlock()
}

// PartitionDirs lists the partition directories this node holds, by topic.
func (b *Broker) PartitionDirs() map[string][]int {
	out := map[string][]int{}
	topics, err := b.reg.TopicDirs()
	if err != nil {
		return out
	}
	for _, t := range topics {
		td, err := b.reg.TopicDir(t)
		if err != nil {
			continue
		}
		ents, _ := os.ReadDir(td)
		for _, e := range ents {
			var p int
			if e.IsDir() && len(e.Name()) == 6 && e.Name()[0] == 'p' {
				if _, err := fmt.Sscanf(e.Name(), "p%05d", &p); err == nil {
					out[t] = append(out[t], p)
				}
			}
		}
	}
	return out
}

// StagingDir is where a move stages its copy of topic/p: under the data
// directory, on the same file system as the topics, so installing is one
// rename. Every caller-given name is a validated topic name.
func (b *Broker) StagingDir(topic string, p int) (string, error) {
	if err := ValidateTopicName(topic); err != nil {
		return "", err
	}
	return filepath.Join(b.cfg.DataDir, "moves", topic, fmt.Sprintf("p%05d", p)), nil
}

// ClearStaging removes every staged copy: at start, before any session
// runs, what is there belongs to sessions a crash or a cancel ended.
func (b *Broker) ClearStaging() error {
	return os.RemoveAll(filepath.Join(b.cfg.DataDir, "moves"))
}

// VerifyCopy opens a staged copy as a partition log — recovery included,
// never skipping a corrupt range — reads every record of every segment
// (opening checks only the active one), and reports the high watermark it
// recovers to. Any unreadable frame fails it.
func (b *Broker) VerifyCopy(dir string) (uint64, error) {
	opts := b.reg.opts
	opts.SkipCorrupt = false
	opts.Hooks = storage.Hooks{} // a staged copy's troubles fail the move; they are not this node's data
	l, err := storage.Open(dir, opts)
	if err != nil {
		return 0, err
	}
	hwm, err := scanAll(l)
	if cerr := l.Close(); err == nil {
		err = cerr
	}
	return hwm, err
}

func scanAll(l *storage.Log) (uint64, error) {
	hwm := l.HWM()
	for from := l.Oldest(); from < hwm; {
		res, err := l.Read(from, 4096, 64<<20, storage.NoDueLimit)
		if err != nil {
			return 0, fmt.Errorf("verify the copy at offset %d: %w", from, err)
		}
		if res.Skipped > 0 {
			return 0, fmt.Errorf("verify the copy: %d unreadable records from offset %d", res.Skipped, res.SkippedFrom)
		}
		if len(res.Records) == 0 {
			return 0, fmt.Errorf("verify the copy: no record at offset %d below the high watermark %d", from, hwm)
		}
		from = res.Records[len(res.Records)-1].Offset + 1
	}
	return hwm, nil
}
