package broker

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/vfs"
)

// Registry holds the partition logs open on this node. Logs open lazily on
// first Get and close when idle. Only Get stamps a log's last access; Peek
// and Describe never do, so monitoring and describing cannot keep an idle
// log open or open a closed one.
type Registry struct {
	root string // <data_dir>/topics
	opts storage.Options
	fs   vfs.FS // opts.FS, or the real disk
	now  func() time.Time
	log  *slog.Logger

	mu       sync.Mutex
	logs     map[partKey]*openLog
	failures map[partKey]*openFailure // partitions whose last open failed (health.go)

	// held says a partition is replicated here: its log opens held
	// (replica.Log), so readers see only what a quorum holds. Nil: none.
	held func(topic string, partition int) bool

	// opens counts logs opened: a closed log's directory is as it was
	// described while this has not moved (backlog.go).
	opens atomic.Uint64

	onOpenChange func(open int)
	onError      func(kind string) // errors_total{component="storage"}
}

type partKey struct {
	topic     string
	partition int
}

type openLog struct {
	log        *storage.Log
	lastAccess atomic.Int64 // unix nanos
	recoverAt  atomic.Int64 // unix nanos: when a fenced log may next try Recover
	held       bool         // opened held (a replicated partition)
}

func newRegistry(root string, opts storage.Options, now func() time.Time, log *slog.Logger) *Registry {
	return &Registry{root: root, opts: opts, fs: vfs.Or(opts.FS), now: now, log: log,
		logs: make(map[partKey]*openLog), failures: make(map[partKey]*openFailure),
		onError: func(string) {}}
}

// TopicDir is topics/<topic>. The name is validated again here: no path
// built from client input may leave the data directory.
func (r *Registry) TopicDir(topic string) (string, error) {
	if err := ValidateTopicName(topic); err != nil {
		return "", err
	}
	return filepath.Join(r.root, topic), nil
}

// Dir is topics/<topic>/p<5 digits>.
func (r *Registry) Dir(topic string, partition int) (string, error) {
	td, err := r.TopicDir(topic)
	if err != nil {
		return "", err
	}
	if partition < 0 {
		return "", fmt.Errorf("negative partition %d", partition)
	}
	return filepath.Join(td, storage.PartitionDirName(partition)), nil
}

// Get returns the open log, opening it if needed, and stamps its access.
// A log that cannot be opened answers a 503 naming the reason (health.go);
// a fenced one is recovered first when its retry time has come.
func (r *Registry) Get(topic string, partition int) (*storage.Log, error) {
	k := partKey{topic, partition}
	r.mu.Lock()
	if ol, ok := r.logs[k]; ok {
		ol.lastAccess.Store(r.now().UnixNano())
		r.mu.Unlock()
		if ol.log.Fenced() {
			r.recoverFenced(k, ol)
		}
		return ol.log, nil
	}
	defer r.mu.Unlock()
	if err := r.failedOpen(k); err != nil {
		return nil, err
	}
	dir, err := r.Dir(topic, partition)
	if err != nil {
		return nil, err
	}
	opts := r.opts
	opts.Logger = r.log.With("topic", topic, "partition", partition)
	held := r.held != nil && r.held(topic, partition)
	if held {
		holdOptions(&opts)
	}
	l, err := storage.Open(dir, opts)
	if err != nil {
		return nil, r.openFailed(k, dir, err)
	}
	if _, failed := r.failures[k]; failed {
		delete(r.failures, k)
		r.log.Info("partition log opened again", "topic", topic, "partition", partition)
	}
	ol := &openLog{log: l, held: held}
	ol.lastAccess.Store(r.now().UnixNano())
	r.logs[k] = ol
	r.opens.Add(1)
	r.changed()
	return l, nil
}

// Peek returns the log only if it is already open, without stamping it.
func (r *Registry) Peek(topic string, partition int) *storage.Log {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ol, ok := r.logs[partKey{topic, partition}]; ok {
		return ol.log
	}
	return nil
}

// IsHeld reports whether the partition's open log was opened held.
func (r *Registry) IsHeld(topic string, partition int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	ol, ok := r.logs[partKey{topic, partition}]
	return ok && ol.held
}

// Describe describes a partition without opening it: from memory when the
// log is open, else from its directory (segment files + hwm file).
func (r *Registry) Describe(topic string, partition int) (storage.Stats, error) {
	if l := r.Peek(topic, partition); l != nil {
		return l.Stats(), nil
	}
	dir, err := r.Dir(topic, partition)
	if err != nil {
		return storage.Stats{}, err
	}
	st, err := storage.DescribeFS(r.fs, dir)
	if errors.Is(err, storage.ErrClosed) {
		return storage.Stats{}, err
	}
	return st, err
}

// Open lists the open logs.
func (r *Registry) Open() []OpenPartition {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]OpenPartition, 0, len(r.logs))
	for k, ol := range r.logs {
		out = append(out, OpenPartition{Topic: k.topic, Partition: k.partition, Log: ol.log,
			LastAccess: time.Unix(0, ol.lastAccess.Load())})
	}
	return out
}

// OpenPartition is one entry of Open.
type OpenPartition struct {
	Topic      string
	Partition  int
	Log        *storage.Log
	LastAccess time.Time
}

// CloseIf closes and forgets the log if it is still the one given and was
// not touched since lastAccess (an eviction that lost a race to a Get
// leaves the log open).
func (r *Registry) CloseIf(topic string, partition int, l *storage.Log, lastAccess time.Time) (bool, error) {
	k := partKey{topic, partition}
	r.mu.Lock()
	ol, ok := r.logs[k]
	if !ok || ol.log != l || ol.lastAccess.Load() != lastAccess.UnixNano() {
		r.mu.Unlock()
		return false, nil
	}
	delete(r.logs, k)
	r.changed()
	r.mu.Unlock()
	return true, l.Close()
}

// CloseTopic closes every open log of topic (before its data is deleted).
func (r *Registry) CloseTopic(topic string) {
	r.mu.Lock()
	var doomed []*storage.Log
	for k, ol := range r.logs {
		if k.topic == topic {
			doomed = append(doomed, ol.log)
			delete(r.logs, k)
		}
	}
	for k := range r.failures {
		if k.topic == topic {
			delete(r.failures, k)
		}
	}
	r.changed()
	r.mu.Unlock()
	for _, l := range doomed {
		l.Close()
	}
}

// ClosePartition closes and forgets one partition's log, if open.
func (r *Registry) ClosePartition(topic string, partition int) {
	k := partKey{topic, partition}
	r.mu.Lock()
	ol, ok := r.logs[k]
	delete(r.logs, k)
	delete(r.failures, k)
	r.changed()
	r.mu.Unlock()
	if ok {
		ol.log.Close()
	}
}

// RemoveTopicData closes the topic's logs and deletes its directory. The
// caller must hold a leader confirmation that the topic is gone.
func (r *Registry) RemoveTopicData(topic string) error {
	dir, err := r.TopicDir(topic)
	if err != nil {
		return err
	}
	r.CloseTopic(topic)
	if err := r.fs.RemoveAll(dir); err != nil {
		return err
	}
	return r.fs.SyncDir(r.root)
}

// CloseAll closes every log cleanly (hwm boundaries written).
func (r *Registry) CloseAll() error {
	r.mu.Lock()
	logs := r.logs
	r.logs = make(map[partKey]*openLog)
	r.changed()
	r.mu.Unlock()
	var first error
	for _, ol := range logs {
		if err := ol.log.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// changed reports the open-log count; called under r.mu.
func (r *Registry) changed() {
	if r.onOpenChange != nil {
		r.onOpenChange(len(r.logs))
	}
}

// TopicDirs lists the topic directories on disk.
func (r *Registry) TopicDirs() ([]string, error) {
	ents, err := r.fs.ReadDir(r.root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() && ValidateTopicName(e.Name()) == nil {
			names = append(names, e.Name())
		}
	}
	return names, nil
}
