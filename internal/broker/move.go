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

// Freeze refuses commits into topic/p for ttl (0 lifts a freeze): the
// dispatcher and fan-out keep their records and commit them at the new
// owner after the flip. It returns the partition's high watermark, fixed
// while the freeze holds; the consumer frontier is written first so the
// copy carries it.
func (b *Broker) Freeze(topic string, p int, ttl time.Duration) (uint64, error) {
	if ttl > 0 && !b.owned(topic, p) {
		return 0, apierr.Unavailable(time.Second, "partition %d of %q is not owned by this node", p, topic)
	}
	dir, err := b.reg.Dir(topic, p)
	if err != nil {
		return 0, err
	}
	marker := filepath.Join(dir, movingMarker)
	g := b.gate(topic, p)
	g.mu.Lock()
	if ttl <= 0 {
		g.frozen, g.until = false, time.Time{}
		err := os.Remove(marker)
		g.mu.Unlock()
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, err
		}
		return 0, nil
	}
	if !g.frozen {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			g.mu.Unlock()
			return 0, err
		}
		if err := writeMarker(marker); err != nil {
			g.mu.Unlock()
			return 0, err
		}
	}
	g.frozen, g.until = true, time.Now().Add(ttl)
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
	now := time.Now()
	b.gmu.Lock()
	defer b.gmu.Unlock()
	var out []PartitionRef
	for k, g := range b.gates {
		g.mu.RLock()
		if g.frozen && !now.Before(g.until) {
			out = append(out, PartitionRef{Topic: k.topic, Partition: k.partition})
		}
		g.mu.RUnlock()
	}
	return out
}

// PartitionRef names a partition.
type PartitionRef struct {
	Topic     string
	Partition int
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
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0, err
	}
	var out []PartitionFile
	for _, e := range ents {
		if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), ".tmp") || e.Name() == movingMarker {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // deleted meanwhile (retention)
		}
		out = append(out, PartitionFile{Name: e.Name(), Size: fi.Size()})
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
	dir, err := b.reg.Dir(topic, p)
	if err != nil {
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

// VerifyCopy opens a staged copy as a partition log — recovery included —
// and reports the high watermark it recovers to.
func (b *Broker) VerifyCopy(dir string) (uint64, error) {
	l, err := storage.Open(dir, b.reg.opts)
	if err != nil {
		return 0, err
	}
	hwm := l.HWM()
	return hwm, l.Close()
}
