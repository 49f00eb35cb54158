package hosted

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
	"github.com/narad-io/narad/internal/topic"
	"github.com/narad-io/narad/internal/vfs"
)

// Key names a partition: a topic and its partition index.
type Key struct {
	Topic     string
	Partition int
}

// Config is what a Set needs; every field but Root and Log has a usable
// zero value.
type Config struct {
	Root   string          // <data_dir>/topics
	Log    storage.Options // the options every partition log opens with
	Now    func() time.Time
	Logger *slog.Logger
	MaxIDs int // per-partition cap on remembered producer ids (dedupe.go)
	Hooks  Hooks
	// Held says a partition is replicated here: its log opens held
	// (replica.Log), so readers see only what a quorum holds. Nil: none.
	Held func(topic string, partition int) bool
	// Wake tells a topic's waiting consumers that records became
	// deliverable without a produce: a scheduled record fell due. Nil:
	// none wait.
	Wake func(topic string)
}

// Hooks report what the Set does to the node's metrics; nil fields are
// no-ops.
type Hooks struct {
	OpenLogs        func(open int)            // the number of open logs changed
	StorageError    func(kind string)         // a log failed to open, recover or similar
	QueueError      func(kind string)         // a frontier or counts file failed
	CountsRestored  func(n int)               // delivery counts loaded into a new queue
	DedupeForgotten func(topic string, n int) // ids forgotten before their window ended
}

func (h *Hooks) fill() {
	if h.OpenLogs == nil {
		h.OpenLogs = func(int) {}
	}
	if h.StorageError == nil {
		h.StorageError = func(string) {}
	}
	if h.QueueError == nil {
		h.QueueError = func(string) {}
	}
	if h.CountsRestored == nil {
		h.CountsRestored = func(int) {}
	}
	if h.DedupeForgotten == nil {
		h.DedupeForgotten = func(string, int) {}
	}
}

// Set is the partitions hosted on this node, one Partition each. Logs
// open lazily on first Get and close when idle (CloseIf).
type Set struct {
	root string
	opts storage.Options
	fs   vfs.FS // opts.FS, or the real disk
	now  func() time.Time
	log  *slog.Logger
	held func(topic string, partition int) bool
	wake func(topic string)
	hook Hooks

	maxIDs int

	// mu guards parts and each entry's pointers: read-locked by the
	// lookups of every request (a log, a queue, a window), write-locked
	// only to change an entry.
	mu    sync.RWMutex
	parts map[Key]*Partition
	open  int // entries with a log

	// opens counts logs opened: a closed log's directory is as it was
	// described while this has not moved (Opens).
	opens atomic.Uint64
}

// Partition is one hosted partition. Its pointers are guarded by the
// Set's mu; the values they point to lock themselves.
type Partition struct {
	log     *openLog     // nil while closed
	failure *openFailure // the last open failed (health.go)
	queue   *Queue       // nil until the queue is first used
	window  *idWindow    // nil until the topic's dedupe window is used here
}

// empty says the entry holds nothing and may leave the map.
func (p *Partition) empty() bool {
	return p.log == nil && p.failure == nil && p.queue == nil && p.window == nil
}

type openLog struct {
	log        *storage.Log
	lastAccess atomic.Int64 // unix nanos
	recoverAt  atomic.Int64 // unix nanos: when a fenced log may next try Recover
	held       bool         // opened held (a replicated partition)
}

// New builds an empty Set.
func New(cfg Config) *Set {
	cfg.Hooks.fill()
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Set{root: cfg.Root, opts: cfg.Log, fs: vfs.Or(cfg.Log.FS), now: cfg.Now, log: cfg.Logger,
		held: cfg.Held, wake: cfg.Wake, hook: cfg.Hooks, maxIDs: cfg.MaxIDs, parts: make(map[Key]*Partition)}
}

// FS is the filesystem the partitions live on.
func (s *Set) FS() vfs.FS { return s.fs }

// Root is <data_dir>/topics.
func (s *Set) Root() string { return s.root }

// Options are the options partition logs open with here: a staged copy is
// verified by opening it the same way.
func (s *Set) Options() storage.Options { return s.opts }

// Opens counts the logs opened since the Set was built.
func (s *Set) Opens() uint64 { return s.opens.Load() }

// entry returns k's entry, creating it. Called under s.mu.
func (s *Set) entry(k Key) *Partition {
	p, ok := s.parts[k]
	if !ok {
		p = &Partition{}
		s.parts[k] = p
	}
	return p
}

// release removes k's entry if it holds nothing. Called under s.mu.
func (s *Set) release(k Key, p *Partition) {
	if p.empty() {
		delete(s.parts, k)
	}
}

// TopicDir is topics/<topic>. The name is validated again here: no path
// built from client input may leave the data directory.
func (s *Set) TopicDir(name string) (string, error) {
	if err := topic.ValidateName(name); err != nil {
		return "", err
	}
	return filepath.Join(s.root, name), nil
}

// Dir is topics/<topic>/p<5 digits>.
func (s *Set) Dir(name string, partition int) (string, error) {
	td, err := s.TopicDir(name)
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
func (s *Set) Get(name string, partition int) (*storage.Log, error) {
	k := Key{name, partition}
	// The open log under the read lock (stamped: CloseIf, which reads the
	// stamp, takes the write lock); else open it under the write lock.
	s.mu.RLock()
	if p, ok := s.parts[k]; ok && p.log != nil {
		ol := p.log
		ol.lastAccess.Store(s.now().UnixNano())
		s.mu.RUnlock()
		if ol.log.Fenced() {
			s.recoverFenced(k, ol)
		}
		return ol.log, nil
	}
	s.mu.RUnlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.parts[k]; ok && p.log != nil { // opened meanwhile
		p.log.lastAccess.Store(s.now().UnixNano())
		return p.log.log, nil
	}
	if err := s.failedOpen(k); err != nil {
		return nil, err
	}
	dir, err := s.Dir(name, partition)
	if err != nil {
		return nil, err
	}
	opts := s.opts
	opts.Logger = s.log.With("topic", name, "partition", partition)
	held := s.held != nil && s.held(name, partition)
	if held {
		opts.Held = true // commits are durable on return, visible once released
	}
	l, err := storage.Open(dir, opts)
	if err != nil {
		return nil, s.openFailed(k, dir, err)
	}
	p := s.entry(k)
	if p.failure != nil {
		p.failure = nil
		s.log.Info("partition log opened again", "topic", name, "partition", partition)
	}
	ol := &openLog{log: l, held: held}
	ol.lastAccess.Store(s.now().UnixNano())
	p.log = ol
	s.opens.Add(1)
	s.open++
	s.hook.OpenLogs(s.open)
	return l, nil
}

// Peek returns the log only if it is already open, without stamping it.
func (s *Set) Peek(name string, partition int) *storage.Log {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if p, ok := s.parts[Key{name, partition}]; ok && p.log != nil {
		return p.log.log
	}
	return nil
}

// IsHeld reports whether the partition's open log was opened held.
func (s *Set) IsHeld(name string, partition int) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.parts[Key{name, partition}]
	return ok && p.log != nil && p.log.held
}

// Describe describes a partition without opening it: from memory when the
// log is open, else from its directory (segment files + hwm file).
func (s *Set) Describe(name string, partition int) (storage.Stats, error) {
	if l := s.Peek(name, partition); l != nil {
		return l.Stats(), nil
	}
	dir, err := s.Dir(name, partition)
	if err != nil {
		return storage.Stats{}, err
	}
	return storage.DescribeFS(s.fs, dir)
}

// OpenPartition is one entry of Open.
type OpenPartition struct {
	Topic      string
	Partition  int
	Log        *storage.Log
	LastAccess time.Time
}

// Open lists the open logs.
func (s *Set) Open() []OpenPartition {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]OpenPartition, 0, s.open)
	for k, p := range s.parts {
		if p.log != nil {
			out = append(out, OpenPartition{Topic: k.Topic, Partition: k.Partition, Log: p.log.log,
				LastAccess: time.Unix(0, p.log.lastAccess.Load())})
		}
	}
	return out
}

// closeLog takes k's log out of its entry. Called under s.mu.
func (s *Set) closeLog(p *Partition) *storage.Log {
	if p.log == nil {
		return nil
	}
	l := p.log.log
	p.log = nil
	s.open--
	return l
}

// CloseIf closes and forgets the log if it is still the one given and was
// not touched since lastAccess (an eviction that lost a race to a Get
// leaves the log open). The partition's queue and window stay.
func (s *Set) CloseIf(name string, partition int, l *storage.Log, lastAccess time.Time) (bool, error) {
	k := Key{name, partition}
	s.mu.Lock()
	p, ok := s.parts[k]
	if !ok || p.log == nil || p.log.log != l || p.log.lastAccess.Load() != lastAccess.UnixNano() {
		s.mu.Unlock()
		return false, nil
	}
	s.closeLog(p)
	s.release(k, p)
	s.hook.OpenLogs(s.open)
	s.mu.Unlock()
	return true, l.Close()
}

// CloseTopic closes every open log of a topic and forgets its failures
// (before its data is deleted or its queues dropped).
func (s *Set) CloseTopic(name string) {
	s.mu.Lock()
	var doomed []*storage.Log
	for k, p := range s.parts {
		if k.Topic != name {
			continue
		}
		if l := s.closeLog(p); l != nil {
			doomed = append(doomed, l)
		}
		p.failure = nil
		s.release(k, p)
	}
	s.hook.OpenLogs(s.open)
	s.mu.Unlock()
	for _, l := range doomed {
		l.Close()
	}
}

// ClosePartition closes and forgets one partition's log, if open; its
// queue and window stay (Forget drops them too).
func (s *Set) ClosePartition(name string, partition int) {
	k := Key{name, partition}
	s.mu.Lock()
	var l *storage.Log
	if p, ok := s.parts[k]; ok {
		l = s.closeLog(p)
		p.failure = nil
		s.release(k, p)
	}
	s.hook.OpenLogs(s.open)
	s.mu.Unlock()
	if l != nil {
		l.Close()
	}
}

// Forget closes one partition's log and drops its queue and window: its
// directory is about to be replaced by a copy or removed, or another node
// now decides what it holds. Persist what must survive first.
func (s *Set) Forget(name string, partition int) {
	s.ClosePartition(name, partition)
	s.DropQueue(name, partition)
}

// RemoveTopicData closes the topic's logs and deletes its directory. The
// caller must hold a leader confirmation that the topic is gone.
func (s *Set) RemoveTopicData(name string) error {
	dir, err := s.TopicDir(name)
	if err != nil {
		return err
	}
	s.CloseTopic(name)
	if err := s.fs.RemoveAll(dir); err != nil {
		return err
	}
	return s.fs.SyncDir(s.root)
}

// CloseAll closes every log cleanly (hwm boundaries written) and stops
// every queue's schedule watcher.
func (s *Set) CloseAll() error {
	s.mu.Lock()
	var logs []*storage.Log
	for k, p := range s.parts {
		if p.queue != nil {
			p.queue.closeSchedule()
		}
		if l := s.closeLog(p); l != nil {
			logs = append(logs, l)
		}
		s.release(k, p)
	}
	s.hook.OpenLogs(s.open)
	s.mu.Unlock()
	var first error
	for _, l := range logs {
		if err := l.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// TopicDirs lists the topic directories on disk.
func (s *Set) TopicDirs() ([]string, error) {
	ents, err := s.fs.ReadDir(s.root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() && topic.ValidateName(e.Name()) == nil {
			names = append(names, e.Name())
		}
	}
	return names, nil
}
