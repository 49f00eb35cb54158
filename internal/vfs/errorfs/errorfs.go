package errorfs

import (
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"

	"github.com/narad-io/narad/internal/vfs"
)

// Op is a set of call kinds a Rule matches.
type Op uint16

const (
	OpOpen     Op = 1 << iota // OpenFile, CreateTemp
	OpRead                    // Read, ReadAt
	OpWrite                   // Write, WriteAt
	OpSync                    // Sync, Datasync, SyncDir
	OpRename                  // Rename (matched on either path)
	OpRemove                  // Remove, RemoveAll
	OpTruncate                // Truncate
	OpMkdir                   // MkdirAll
	OpStat                    // Stat, ReadDir, File.Stat
	OpLock                    // Lock

	OpAll Op = 1<<iota - 1
)

var opNames = []string{"open", "read", "write", "sync", "rename", "remove", "truncate", "mkdir", "stat", "lock"}

func (o Op) String() string {
	var parts []string
	for i, n := range opNames {
		if o&(1<<i) != 0 {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, "|")
}

// Rule says which calls fail and how.
type Rule struct {
	Ops Op
	// Path, when set, must be a substring of the call's path (for a
	// rename, of either path).
	Path string
	// After lets this many matching calls through before the first
	// failure.
	After int
	// Times is how many matching calls fail once After is spent; 0 means
	// every one from then on (a sticky fault, like a full disk).
	Times int
	// Err is the error returned, wrapped in an *fs.PathError.
	Err error
	// Corrupt, for a matching read, lets the read succeed but flips a bit
	// of the first byte it returns: a disk or cache handing back other
	// bytes than were written, which only a checksum notices. Err is not
	// needed (nor returned) with Corrupt.
	Corrupt bool
	// CorruptAt, with Corrupt, is which byte of the returned bytes has its
	// bit flipped instead of the first (the last when the read returned
	// fewer): a frame's header can then read back right and its payload
	// wrong, which only the checksum over the payload notices.
	CorruptAt int
	// Rewrite, with Corrupt, is handed what the read returned to change
	// in place instead of the bit flip: a disk handing back other bytes
	// that still check (a stale block, a write that went elsewhere),
	// which only a comparison with what was written notices.
	Rewrite func(got []byte)
	// Torn, for a failing write, writes this fraction of the buffer
	// (rounded down) before failing, as a write cut short by a full disk.
	Torn float64
	// LoseUnsynced, for a failing Sync/Datasync, truncates the file back
	// to its size at its last successful sync first: the pages the kernel
	// could not write are gone (fsyncgate), which an append-only file
	// sees as a shorter file.
	LoseUnsynced bool
}

// Injection is a rule in force; it reports how often it fired.
type Injection struct {
	fs    *FS
	rule  Rule
	seen  int
	fired int
}

// Fired is how many calls this rule failed.
func (in *Injection) Fired() int {
	in.fs.mu.Lock()
	defer in.fs.mu.Unlock()
	return in.fired
}

// Remove lifts the rule: the fault heals (space was freed, the disk came
// back).
func (in *Injection) Remove() {
	in.fs.mu.Lock()
	defer in.fs.mu.Unlock()
	for i, r := range in.fs.rules {
		if r == in {
			in.fs.rules = append(in.fs.rules[:i], in.fs.rules[i+1:]...)
			return
		}
	}
}

// FS is the fault-injecting filesystem.
type FS struct {
	inner   vfs.FS
	mu      sync.Mutex
	rules   []*Injection
	journal journal    // unsynced writes, for LoseUnsyncedWrites (crash.go)
	dirs    dirEntries // entries whose parent is not synced since (dirsync.go)
}

// New wraps inner.
func New(inner vfs.FS) *FS { return &FS{inner: inner} }

// Inject puts r in force and returns its handle.
func (f *FS) Inject(r Rule) *Injection {
	if r.Err == nil && !r.Corrupt {
		panic("errorfs: a rule needs an Err (or Corrupt)")
	}
	in := &Injection{fs: f, rule: r}
	f.mu.Lock()
	f.rules = append(f.rules, in)
	f.mu.Unlock()
	return in
}

// Clear lifts every rule.
func (f *FS) Clear() {
	f.mu.Lock()
	f.rules = nil
	f.mu.Unlock()
}

// check reports the rule that fails this call, if any. Every matching
// rule counts the call, so rules are independent of each other.
func (f *FS) check(op Op, paths ...string) *Rule {
	f.mu.Lock()
	defer f.mu.Unlock()
	var hit *Rule
	for _, in := range f.rules {
		if in.rule.Ops&op == 0 || !matches(in.rule.Path, paths) {
			continue
		}
		in.seen++
		if in.seen <= in.rule.After {
			continue
		}
		if in.rule.Times > 0 && in.fired >= in.rule.Times {
			continue
		}
		in.fired++
		if hit == nil {
			r := in.rule
			hit = &r
		}
	}
	return hit
}

func matches(sub string, paths []string) bool {
	if sub == "" {
		return true
	}
	for _, p := range paths {
		if strings.Contains(p, sub) {
			return true
		}
	}
	return false
}

func fail(op Op, path string, r *Rule) error {
	return &fs.PathError{Op: "errorfs " + op.String(), Path: path, Err: r.Err}
}

func (f *FS) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	if r := f.check(OpOpen, name); r != nil {
		return nil, fail(OpOpen, name, r)
	}
	created := f.creates(name, flag)
	inner, err := f.inner.OpenFile(name, flag, perm)
	if err == nil && created {
		f.dirs.note(name)
	}
	return f.wrap(inner, err)
}

func (f *FS) CreateTemp(dir, pattern string) (vfs.File, error) {
	if r := f.check(OpOpen, dir+"/"+pattern); r != nil {
		return nil, fail(OpOpen, dir, r)
	}
	inner, err := f.inner.CreateTemp(dir, pattern)
	if err == nil {
		f.dirs.note(inner.Name())
	}
	return f.wrap(inner, err)
}

func (f *FS) wrap(inner vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	ff := &file{File: inner, fs: f}
	if fi, err := inner.Stat(); err == nil {
		ff.synced = fi.Size() // what is already there survived whatever came before
		f.journal.opened(inner.Name(), fi.Size())
	}
	return ff, nil
}

func (f *FS) Remove(name string) error {
	if r := f.check(OpRemove, name); r != nil {
		return fail(OpRemove, name, r)
	}
	err := f.inner.Remove(name)
	if err == nil {
		f.dirs.forget(name)
		f.journal.removed(name)
	}
	return err
}

func (f *FS) RemoveAll(name string) error {
	if r := f.check(OpRemove, name); r != nil {
		return fail(OpRemove, name, r)
	}
	err := f.inner.RemoveAll(name)
	if err == nil {
		f.dirs.forget(name)
		f.journal.removed(name)
	}
	return err
}

func (f *FS) Rename(o, n string) error {
	if r := f.check(OpRename, o, n); r != nil {
		return fail(OpRename, o, r)
	}
	err := f.inner.Rename(o, n)
	if err == nil {
		f.dirs.forget(o)
		f.dirs.note(n)
	}
	return err
}

func (f *FS) MkdirAll(name string, perm fs.FileMode) error {
	if r := f.check(OpMkdir, name); r != nil {
		return fail(OpMkdir, name, r)
	}
	created, _ := vfs.MissingDirs(f.inner, name) // best effort: MkdirAll reports a failing Stat
	err := f.inner.MkdirAll(name, perm)
	if err == nil {
		f.dirs.note(created...)
	}
	return err
}

func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	if r := f.check(OpStat, name); r != nil {
		return nil, fail(OpStat, name, r)
	}
	ents, err := f.inner.ReadDir(name)
	for i, e := range ents {
		ents[i] = dirEntry{DirEntry: e, fs: f, path: filepath.Join(name, e.Name())}
	}
	return ents, err
}

// dirEntry is a listed entry whose Info (an lstat) goes through the rules
// as an OpStat of its path.
type dirEntry struct {
	fs.DirEntry
	fs   *FS
	path string
}

func (e dirEntry) Info() (fs.FileInfo, error) {
	if r := e.fs.check(OpStat, e.path); r != nil {
		return nil, fail(OpStat, e.path, r)
	}
	return e.DirEntry.Info()
}

func (f *FS) Stat(name string) (fs.FileInfo, error) {
	if r := f.check(OpStat, name); r != nil {
		return nil, fail(OpStat, name, r)
	}
	return f.inner.Stat(name)
}

func (f *FS) SyncDir(name string) error {
	if r := f.check(OpSync, name); r != nil {
		return fail(OpSync, name, r)
	}
	err := f.inner.SyncDir(name)
	if err == nil {
		f.dirs.synced(name)
	}
	return err
}

func (f *FS) Lock(name string) (io.Closer, error) {
	if r := f.check(OpLock, name); r != nil {
		return nil, fail(OpLock, name, r)
	}
	return f.inner.Lock(name)
}

// file is an open file of the errorfs; synced is its size at its last
// successful sync, for LoseUnsynced.
type file struct {
	vfs.File
	fs     *FS
	mu     sync.Mutex
	synced int64
}

func (f *file) Read(p []byte) (int, error) {
	r := f.fs.check(OpRead, f.Name())
	if r != nil && !r.Corrupt {
		return 0, fail(OpRead, f.Name(), r)
	}
	n, err := f.File.Read(p)
	return n, corrupt(r, p[:n], err)
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	r := f.fs.check(OpRead, f.Name())
	if r != nil && !r.Corrupt {
		return 0, fail(OpRead, f.Name(), r)
	}
	n, err := f.File.ReadAt(p, off)
	return n, corrupt(r, p[:n], err)
}

// corrupt flips a bit of what a Corrupt rule's read returned.
func corrupt(r *Rule, got []byte, err error) error {
	switch {
	case r == nil || len(got) == 0:
	case r.Rewrite != nil:
		r.Rewrite(got)
	default:
		got[min(r.CorruptAt, len(got)-1)] ^= 0x01
	}
	return err
}

func (f *file) Write(p []byte) (int, error) {
	if r := f.fs.check(OpWrite, f.Name()); r != nil {
		n := 0
		if k := int(float64(len(p)) * r.Torn); k > 0 {
			n, _ = f.File.Write(p[:k])
		}
		return n, fail(OpWrite, f.Name(), r)
	}
	return f.File.Write(p)
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	if r := f.fs.check(OpWrite, f.Name()); r != nil {
		n := 0
		if k := int(float64(len(p)) * r.Torn); k > 0 {
			f.fs.journal.wrote(f.Name(), off, before(f, off, k))
			n, _ = f.File.WriteAt(p[:k], off)
		}
		return n, fail(OpWrite, f.Name(), r)
	}
	f.fs.journal.wrote(f.Name(), off, before(f, off, len(p)))
	return f.File.WriteAt(p, off)
}

func (f *file) Truncate(size int64) error {
	if r := f.fs.check(OpTruncate, f.Name()); r != nil {
		return fail(OpTruncate, f.Name(), r)
	}
	if err := f.File.Truncate(size); err != nil {
		return err
	}
	f.mu.Lock()
	if size < f.synced {
		f.synced = size
	}
	f.mu.Unlock()
	return nil
}

func (f *file) Stat() (fs.FileInfo, error) {
	if r := f.fs.check(OpStat, f.Name()); r != nil {
		return nil, fail(OpStat, f.Name(), r)
	}
	return f.File.Stat()
}

func (f *file) Sync() error     { return f.sync(f.File.Sync) }
func (f *file) Datasync() error { return f.sync(f.File.Datasync) }

func (f *file) sync(do func() error) error {
	if r := f.fs.check(OpSync, f.Name()); r != nil {
		if r.LoseUnsynced {
			f.mu.Lock()
			size := f.synced
			f.mu.Unlock()
			if fi, err := f.File.Stat(); err == nil && fi.Size() > size {
				if err := f.File.Truncate(size); err != nil {
					return fmt.Errorf("errorfs: losing unsynced bytes: %w", err)
				}
			}
		}
		return fail(OpSync, f.Name(), r)
	}
	if err := do(); err != nil {
		return err
	}
	if fi, err := f.File.Stat(); err == nil {
		f.mu.Lock()
		f.synced = fi.Size()
		f.mu.Unlock()
		f.fs.journal.synced(f.Name(), fi.Size())
	}
	return nil
}
