package journal

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/internal/vfs"
)

// Owner is who journals writes to the files of one directory: a held
// partition log.
type Owner interface {
	// SyncJournaled makes every write the owner journaled durable in its
	// own files (an fdatasync), so that the journal may drop them.
	SyncJournaled() error
}

// Options configure a Journal; the zero value is usable.
type Options struct {
	FS     vfs.FS       // nil: the real disk
	Logger *slog.Logger // nil: discard
	// MaxBytes is the size past which the active file is retired (package
	// doc): its owners sync their files and it is removed. Default 64 MiB.
	MaxBytes int64
	// Synced, when set, is told the duration of each fdatasync of the
	// journal (a metric).
	Synced func(time.Duration)
	// Delay, when not 0, is how long a write that finds no sync in flight
	// waits before it writes, so that the writes arriving meanwhile share
	// its fdatasync (as PostgreSQL's commit_delay). Every write then
	// takes up to Delay longer, loaded or not; under load the node makes
	// fewer fdatasyncs and spends less CPU a record
	// (docs/replication-levers.md).
	// Default 0: no wait.
	Delay time.Duration

	sleep func(time.Duration) // time.Sleep; tests hold it
}

// ErrClosed is returned by Write and Forget after Close.
var ErrClosed = errors.New("journal closed")

// Journal is a node's shared redo log (package doc). Its methods are safe
// for concurrent use.
type Journal struct {
	fs        vfs.FS
	root, dir string
	opts      Options
	log       *slog.Logger

	mu   sync.Mutex
	cond sync.Cond
	// The active file, its number, the bytes of it that are durable, and
	// how far it is filled with zeros ahead of them (zeroed).
	f      vfs.File
	num    uint64
	size   int64
	zeroed int64
	// Group commit: entries encoded into pending belong to the group next,
	// which waits for the write in flight (syncing). failed is for good.
	pending, spare []byte
	next           *group
	syncing        bool
	failed         error
	closed         bool
	// owners maps each owner to the oldest journal file that may hold a
	// write of it no forget covers; live is the directories with such
	// writes (Restore's shortcut).
	owners   map[Owner]uint64
	live     map[string]bool
	retiring bool

	// rot is held while older files are removed or read (Restore); oldest
	// is the lowest file number on disk.
	rot    sync.Mutex
	oldest uint64

	syncs atomic.Uint64
	wg    sync.WaitGroup
}

// Open replays the journal under root/journal into the files under root
// (package doc), removes its old files and starts a new one. Call it
// before any partition log under root opens.
func Open(root string, opts Options) (*Journal, error) {
	fsys := vfs.Or(opts.FS)
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 64 << 20
	}
	if opts.sleep == nil {
		opts.sleep = time.Sleep
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	dir := filepath.Join(root, "journal")
	if err := fsys.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := fsys.SyncDir(root); err != nil {
		return nil, err
	}
	nums, err := listFiles(fsys, dir)
	if err != nil {
		return nil, err
	}
	var all []entry
	for _, n := range nums {
		es, err := readEntries(fsys, filepath.Join(dir, fileName(n)), -1)
		if err != nil {
			return nil, err
		}
		all = append(all, es...)
	}
	n, bytes, err := apply(fsys, root, live(all, ""))
	if err != nil {
		return nil, err
	}
	if len(nums) > 0 {
		log.Info("journal replayed: the held partition logs' writes since their last sync are back in their files",
			"files", len(nums), "writes", n, "bytes", bytes)
	}
	next := uint64(1)
	if len(nums) > 0 {
		next = nums[len(nums)-1] + 1
	}
	f, err := create(fsys, dir, next)
	if err != nil {
		return nil, err
	}
	for _, n := range nums {
		if err := fsys.Remove(filepath.Join(dir, fileName(n))); err != nil {
			f.Close()
			return nil, err
		}
	}
	if err := fsys.SyncDir(dir); err != nil {
		f.Close()
		return nil, err
	}
	j := &Journal{fs: fsys, root: root, dir: dir, opts: opts, log: log,
		f: f, num: next, oldest: next,
		owners: map[Owner]uint64{}, live: map[string]bool{}}
	j.cond.L = &j.mu
	return j, nil
}

// create makes journal file n, its name durable.
func create(fsys vfs.FS, dir string, n uint64) (vfs.File, error) {
	f, err := fsys.OpenFile(filepath.Join(dir, fileName(n)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	if err := fsys.SyncDir(dir); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Write journals data at pos of the file path (under the journal's root)
// for o, and returns once it is durable: with the writes of every other
// caller queued meanwhile, in one write and one fdatasync.
func (j *Journal) Write(o Owner, path string, pos int64, data []byte) error {
	rel, err := j.rel(path)
	if err != nil {
		return err
	}
	j.mu.Lock()
	if err := j.usableLocked(); err != nil {
		j.mu.Unlock()
		return err
	}
	j.pending = appendWrite(j.pending, rel, pos, data)
	if _, ok := j.owners[o]; !ok {
		j.owners[o] = j.num
	}
	j.live[filepath.Dir(rel)] = true
	return j.commitLocked()
}

// Forget journals that no earlier write to a file of dir counts any more,
// and returns once that is durable. o must have made its files in dir
// durable first, and must not write to them meanwhile; it owes the
// journal nothing after. A directory with nothing journaled since its last
// forget costs nothing.
func (j *Journal) Forget(o Owner, dir string) error {
	rel, err := j.rel(dir)
	if err != nil {
		return err
	}
	j.mu.Lock()
	if !j.live[rel] {
		delete(j.owners, o)
		j.mu.Unlock()
		return nil
	}
	if err := j.usableLocked(); err != nil {
		j.mu.Unlock()
		return err
	}
	j.pending = appendForget(j.pending, rel)
	if err := j.commitLocked(); err != nil {
		return err
	}
	j.mu.Lock()
	delete(j.live, rel)
	delete(j.owners, o)
	j.mu.Unlock()
	return nil
}

// Live reports whether dir has writes journaled that no forget covers:
// whether a log reopening there needs Restore.
func (j *Journal) Live(dir string) bool {
	rel, err := j.rel(dir)
	if err != nil {
		return false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.live[rel]
}

// Restore puts back the journaled writes to files of dir that no forget
// covers, and fdatasyncs those files: for a log that reopens after an
// fdatasync of its own failed, while the journal still holds what the
// kernel may have dropped. The log must be closed.
func (j *Journal) Restore(dir string) error {
	rel, err := j.rel(dir)
	if err != nil {
		return err
	}
	j.mu.Lock()
	num, size, isLive := j.num, j.size, j.live[rel]
	j.mu.Unlock()
	if !isLive {
		return nil
	}
	j.rot.Lock()
	defer j.rot.Unlock()
	var all []entry
	for n := j.oldest; n <= num; n++ {
		limit := int64(-1)
		if n == num {
			limit = size // only what is durable
		}
		es, err := readEntries(j.fs, filepath.Join(j.dir, fileName(n)), limit)
		if err != nil {
			return err
		}
		all = append(all, es...)
	}
	n, bytes, err := apply(j.fs, j.root, live(all, rel))
	if err == nil {
		j.log.Info("journal restored a partition log's writes after its own fdatasync failed", "dir", rel, "writes", n, "bytes", bytes)
	}
	return err
}

// Syncs is how many fdatasyncs the journal made.
func (j *Journal) Syncs() uint64 { return j.syncs.Load() }

// Close waits for a retirement in progress and closes the active file.
// Owners are expected to have closed (and forgotten) first.
func (j *Journal) Close() error {
	j.mu.Lock()
	for j.syncing {
		j.cond.Wait()
	}
	if j.closed {
		j.mu.Unlock()
		return nil
	}
	j.closed = true
	j.mu.Unlock()
	j.wg.Wait()
	return j.f.Close()
}

func (j *Journal) usableLocked() error {
	if j.closed {
		return ErrClosed
	}
	return j.failed
}

// rel is path relative to the journal's root; it must lie under it.
func (j *Journal) rel(path string) (string, error) {
	rel, err := filepath.Rel(j.root, path)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("journal: %s is not under the data directory %s", path, j.root)
	}
	return rel, nil
}

// group is the callers whose entries one write and fdatasync carry.
type group struct {
	delayed bool // its first writer waited Options.Delay
	done    bool
	err     error
}

// commitLocked makes the caller's entry, just added to pending, durable:
// the first caller to find no write in flight writes everything pending
// (its group) with one write and one fdatasync, and the others wait for
// theirs. Called with mu held; returns with it released.
func (j *Journal) commitLocked() error {
	if j.next == nil {
		j.next = &group{}
	}
	mine := j.next
	for !mine.done {
		if j.syncing {
			j.cond.Wait()
			continue
		}
		if err := j.usableLocked(); err != nil {
			// Failed for good, or closed while this group waited: its
			// file must not be written again.
			mine.done, mine.err = true, err
			break
		}
		if j.opts.Delay > 0 && !mine.delayed {
			// Holding the sync (syncing) while it waits: writers arriving
			// meanwhile join this group and queue, as behind a sync in
			// flight. Then round again: the journal may have been failed
			// or closed meanwhile (Close waits for syncing to end).
			mine.delayed = true
			j.syncing = true
			j.mu.Unlock()
			j.opts.sleep(j.opts.Delay)
			j.mu.Lock()
			j.syncing = false
			continue
		}
		j.syncing = true
		g, buf, f, at, zeroed := j.next, j.pending, j.f, j.size, j.zeroed
		j.next, j.pending = nil, j.spare[:0]
		j.mu.Unlock()
		zeroed, err := j.writeSync(f, buf, at, zeroed)
		j.mu.Lock()
		j.spare, j.zeroed = buf, zeroed
		switch {
		case errors.Is(err, errUndone):
			// A write that failed (a full disk) and was cut off again:
			// this group is refused, and the next tries again at the
			// same place.
			j.log.Warn("journal write failed and was undone; the writes waiting for it are refused", "file", f.Name(), "err", err)
		case err != nil:
			j.failed = err
			j.log.Error("journal write failed: no replicated write is acknowledged on this node until it restarts", "file", f.Name(), "err", err)
		default:
			j.size += int64(len(buf))
			j.syncs.Add(1)
			if j.size >= j.opts.MaxBytes && !j.retiring {
				j.rotateLocked()
			}
		}
		g.done, g.err = true, err
		j.syncing = false
		j.cond.Broadcast()
	}
	j.mu.Unlock()
	return mine.err
}

// zeroChunk is how far ahead of its entries the active file is filled
// with zeros. An fdatasync of a write within the file's size flushes the
// data alone; one that grows the file must also commit its new size to
// the file system's own journal, which costs the sync more (measured in
// docs/replication-performance.md, "One journal a node"). Zeros also
// end a replay: an entry of length 0 is never written.
const zeroChunk = 1 << 20

var zeros = make([]byte, zeroChunk)

// errUndone is wrapped by a failed write that was cut off again: the
// file is as it was, and the journal goes on.
var errUndone = errors.New("the failed write was undone")

// writeSync writes buf at `at` of f and fdatasyncs it, first filling f
// with zeros past zeroed when buf would pass it; it returns how far f is
// zeroed now. A failed write (ENOSPC) is undone by cutting the file back
// to at, as the partition log undoes one (package storage): nothing of
// it may stay for a replay to read past the durable entries. Only a
// failed fdatasync, or an undo that fails, fails the journal for good.
func (j *Journal) writeSync(f vfs.File, buf []byte, at, zeroed int64) (int64, error) {
	undo := func(err error) (int64, error) {
		err = fmt.Errorf("journal: write %s: %w", f.Name(), err)
		if terr := f.Truncate(at); terr != nil {
			return zeroed, fmt.Errorf("%w (and cutting it off failed: %v)", err, terr)
		}
		return at, fmt.Errorf("%w: %w", errUndone, err)
	}
	for end := at + int64(len(buf)); zeroed < end; zeroed += zeroChunk {
		if _, err := f.WriteAt(zeros, zeroed); err != nil {
			return undo(err)
		}
	}
	if _, err := f.WriteAt(buf, at); err != nil {
		return undo(err)
	}
	t0 := time.Now()
	if err := f.Datasync(); err != nil {
		return zeroed, fmt.Errorf("journal: fdatasync %s: %w", f.Name(), err)
	}
	if h := j.opts.Synced; h != nil {
		h(time.Since(t0))
	}
	return zeroed, nil
}

// rotateLocked starts a new active file and retires the older ones in
// the background. A file that cannot be made is logged, and the next
// group tries again. Called with mu held by the caller that is syncing,
// so nothing is written meanwhile.
func (j *Journal) rotateLocked() {
	next, err := create(j.fs, j.dir, j.num+1)
	if err != nil {
		j.log.Warn("journal: the next file could not be made; the active one keeps growing", "err", err)
		return
	}
	old, upto := j.f, j.num
	j.f, j.num, j.size, j.zeroed = next, j.num+1, 0, 0
	j.retiring = true
	j.wg.Add(1)
	go j.retire(old, upto)
}

// retire makes every owner with writes in files up to upto sync its own
// files, then removes those journal files. An owner that fails keeps them
// (the next retirement tries again).
func (j *Journal) retire(old vfs.File, upto uint64) {
	defer j.wg.Done()
	old.Close()
	j.mu.Lock()
	var owners []Owner
	for o, first := range j.owners {
		if first <= upto {
			owners = append(owners, o)
		}
	}
	j.mu.Unlock()
	var failed error
	for _, o := range owners {
		if err := o.SyncJournaled(); err != nil {
			failed = err
			continue
		}
		j.mu.Lock()
		if first, ok := j.owners[o]; ok && first <= upto {
			j.owners[o] = upto + 1
		}
		j.mu.Unlock()
	}
	if failed == nil {
		j.rot.Lock()
		for n := j.oldest; n <= upto && failed == nil; n++ {
			if err := j.fs.Remove(filepath.Join(j.dir, fileName(n))); err != nil {
				failed = err
				break
			}
			j.oldest = n + 1
		}
		if failed == nil {
			failed = j.fs.SyncDir(j.dir)
		}
		j.rot.Unlock()
	}
	if failed != nil {
		j.log.Warn("journal: older files kept: an owner could not sync, or a file could not be removed; the next retirement tries again", "err", failed)
	}
	j.mu.Lock()
	j.retiring = false
	j.mu.Unlock()
}
