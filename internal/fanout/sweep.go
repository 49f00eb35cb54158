package fanout

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The orphan sweep (rule: leader-confirmed sweep) and the ownership of
// cursor file paths it must respect.
//
// A sweep decides from a file it read and a leader confirmation that takes
// a network round trip; a cursor of a new attach can anchor a file at that
// same path meanwhile. So each running cursor owns its path from before
// its first read of the file until after its last write, and the sweep,
// under the same lock, re-checks ownership and re-reads the file right
// before it removes it: an owned path, or a file that is no longer the one
// the leader judged, is kept for a later sweep.

// ownedPaths is the registry of cursor file paths running cursors own.
type ownedPaths struct {
	mu sync.Mutex // held across a sweep's final check and its removal
	by map[string]*cursor
}

// own registers path as c's; false if another cursor holds it (the
// reconciler runs one cursor per path, so this is only a safety net).
func (o *ownedPaths) own(path string, c *cursor) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.by == nil {
		o.by = map[string]*cursor{}
	}
	if holder, ok := o.by[path]; ok && holder != c {
		return false
	}
	o.by[path] = c
	return true
}

func (o *ownedPaths) has(path string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.by[path]
	return ok
}

func (o *ownedPaths) release(path string, c *cursor) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.by[path] == c {
		delete(o.by, path)
	}
}

// sweepOrphans removes cursor files that belong to no current link (rule:
// leader-confirmed sweep), each deletion confirmed by the leader; any doubt
// keeps the file.
func (e *Engine) sweepOrphans() {
	topics, err := e.logs.TopicDirs()
	if err != nil {
		return
	}
	for _, parent := range topics {
		td, err := e.logs.TopicDir(parent)
		if err != nil {
			continue
		}
		for _, pdir := range e.listDir(td, "p[0-9][0-9][0-9][0-9][0-9]") {
			p, err := strconv.Atoi(strings.TrimPrefix(pdir, "p"))
			if err != nil {
				continue
			}
			for _, f := range e.listDir(filepath.Join(td, pdir), "fanout-*.offset") {
				child := strings.TrimSuffix(strings.TrimPrefix(f, "fanout-"), ".offset")
				e.sweepOne(parent, child, p, filepath.Join(td, pdir, f))
			}
		}
	}
}

// listDir names the entries of dir that match pattern; an unreadable
// directory lists nothing (the sweep keeps what it cannot see).
func (e *Engine) listDir(dir, pattern string) []string {
	ents, err := e.cfg.FS.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, ent := range ents {
		if ok, _ := filepath.Match(pattern, ent.Name()); ok {
			out = append(out, ent.Name())
		}
	}
	return out
}

// sweepOne removes one cursor file if the leader confirms it belongs to no
// current link and, right before the removal, no cursor owns the path and
// the file is still the one the leader judged.
func (e *Engine) sweepOne(parent, child string, p int, path string) {
	if e.owned.has(path) {
		return // a live cursor's file: no need to ask the leader
	}
	judged, ok := e.sweepVerdict(child, path)
	if !ok {
		return
	}
	if h := e.sweepHook; h != nil {
		h(path)
	}
	e.owned.mu.Lock()
	defer e.owned.mu.Unlock()
	if e.owned.by[path] != nil {
		return // a cursor runs on it now: never remove under it
	}
	if now, ok := e.fileIdentity(path); !ok || now != judged {
		return // replaced since it was judged: the next sweep judges it again
	}
	if e.cfg.FS.Remove(path) == nil {
		e.cfg.Logger.Info("removed orphan cursor file", "parent", parent, "child", child, "partition", p, "epoch", judged)
	}
}

// sweepVerdict reads the file and asks the leader whether it may go. It
// returns the identity of the file it judged, and whether it may be
// removed.
func (e *Engine) sweepVerdict(child, path string) (string, bool) {
	judged, ok := e.fileIdentity(path)
	if !ok {
		return "", false
	}
	epoch := judged
	if epoch == unreadableCursor {
		epoch = "" // unreadable: delete only if the child itself is gone
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	childExists, current, err := e.meta.ConfirmTopic(ctx, child, epoch)
	if err != nil || (childExists && (current || epoch == "")) {
		return "", false
	}
	return judged, true
}

// unreadableCursor is the identity of a file that exists but does not
// decode; no epoch can take this value (its alphabet has no space).
const unreadableCursor = "corrupt file"

// fileIdentity is what the sweep judges a cursor file by: its epoch, or
// unreadableCursor. ok is false when there is no file, or an I/O error
// says nothing about it.
func (e *Engine) fileIdentity(path string) (string, bool) {
	st, exists, err := readCursorFile(e.cfg.FS, path)
	switch {
	case !exists:
		return "", false
	case err != nil:
		return unreadableCursor, true
	}
	return st.Epoch, true
}

// errPathOwned: another cursor still owns this cursor's file path.
var errPathOwned = fmt.Errorf("%w: the cursor file is still owned by another cursor", errDeferred)
