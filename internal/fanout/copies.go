package fanout

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/narad-io/narad/internal/vfs"
)

// Cursor files of a replicated parent follow its leader
// (docs/replication.md): the leader's cursors run and write their files as
// for any parent; the leader's node sends the files' positions to the
// partition's followers, and each follower writes them beside its copy of
// the log. When a follower becomes the leader its cursors resume from those
// files (same epoch: no anchor; rule: start at the attach point), so a
// failover copies again at most what the leader advanced since its
// followers last heard, never everything from the attach point.
//
// Every value such a file may hold is safe to resume from: a leader's
// cursor writes next only once the child has committed every record below
// it, those records are committed on the parent (a cursor reads nothing
// else), and committed records are on every replica that can lead. So a
// copy is never moved back (the higher of two positions of one epoch is
// the one with fewer duplicates) and never past the follower's own
// committed point (its caller clamps it).

// CursorCopy is one cursor file's content as it travels to a follower
// (replica.CursorPosition, the same unnamed struct).
type CursorCopy = struct {
	Child      string
	Epoch      string
	NextOffset uint64
}

// CursorCopies lists the cursor files of parent/partition on this node, as
// their cursors last wrote them, sorted by child. A file that does not
// decode (a write caught half done even after re-reads, damage) is left
// out: its follower keeps the copy it has.
func (e *Engine) CursorCopies(parent string, partition int) ([]CursorCopy, error) {
	dir, err := e.logs.Dir(parent, partition)
	if err != nil {
		return nil, err
	}
	var out []CursorCopy
	for _, name := range e.listDir(dir, "fanout-*.offset") {
		st, exists, err := readCursorFile(e.cfg.FS, filepath.Join(dir, name))
		if err != nil || !exists {
			continue
		}
		child := strings.TrimSuffix(strings.TrimPrefix(name, "fanout-"), ".offset")
		out = append(out, CursorCopy{Child: child, Epoch: st.Epoch, NextOffset: st.NextOffset})
	}
	slices.SortFunc(out, func(a, b CursorCopy) int { return strings.Compare(a.Child, b.Child) })
	return out, nil
}

// WriteCursorCopy writes a copy of the leader's cursor file beside this
// node's copy of parent/partition. It writes nothing (false, nil) when the
// child is not attached to parent at c.Epoch here (detached, re-attached:
// that file would be an orphan), when the file already holds c.Epoch at
// c.NextOffset or later, or when a cursor owns the path here (this node
// led the partition until lately and its cursor is still stopping: the
// file is that cursor's own durable position, safe to resume from). The
// write is atomic (WriteCursorFileAtomic) and done
// while holding the paths' ownership lock, so a cursor starting here
// meanwhile reads either the old file or the new one, and always owns the
// file it then advances in place (a rename after it opened the file would
// take its writes away from the path).
func (e *Engine) WriteCursorCopy(parent string, partition int, c CursorCopy) (bool, error) {
	child, ok := e.meta.Topic(c.Child)
	if !ok || child.Parent != parent || child.AttachEpoch != c.Epoch {
		return false, nil
	}
	if err := checkCursorEpoch(c.Epoch); err != nil {
		return false, err
	}
	dir, err := e.logs.Dir(parent, partition)
	if err != nil {
		return false, err
	}
	path := filepath.Join(dir, CursorFileName(c.Child))
	e.owned.mu.Lock()
	defer e.owned.mu.Unlock()
	if e.owned.by[path] != nil {
		return false, nil
	}
	st, exists, err := readCursorFile(e.cfg.FS, path)
	switch {
	case err != nil && !errors.Is(err, ErrCursorCorrupt):
		return false, err // unknown: never overwrite what could not be read
	case err == nil && exists && st.Epoch == c.Epoch && st.NextOffset >= c.NextOffset:
		return false, nil
	}
	if err := vfs.MkdirAllDurable(e.cfg.FS, dir, 0o755); err != nil {
		return false, fmt.Errorf("cursor copy of %s/%d for %q: %w", parent, partition, c.Child, err)
	}
	if err := WriteCursorFileAtomic(e.cfg.FS, path, c.Epoch, c.NextOffset); err != nil {
		return false, err
	}
	return true, nil
}
