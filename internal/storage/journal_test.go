package storage

import (
	"errors"
	"fmt"
	"math/rand"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/narad-io/narad/internal/journal"
	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// journaledLog is a held log over a journal on an errorfs, and the model
// of what it must hold: every acknowledged record's payload by offset.
type journaledLog struct {
	t    *testing.T
	fsys *errorfs.FS
	root string
	dir  string
	now  int64
	j    *journal.Journal
	l    *Log
	want []string
}

func (m *journaledLog) opts() Options {
	return Options{Held: true, SegmentBytes: 1 << 10, Journal: m.j, FS: m.fsys, Now: clockAt(&m.now)}
}

func (m *journaledLog) openJournal() {
	m.t.Helper()
	j, err := journal.Open(m.root, journal.Options{FS: m.fsys, MaxBytes: 4 << 10})
	if err != nil {
		m.t.Fatalf("journal: %v", err)
	}
	m.j = j
}

func (m *journaledLog) open() { m.l = openT(m.t, m.dir, m.opts()) }

// powerCut drops the log and the journal as a crashed machine does: the
// page cache's unsynced writes are lost, the journal replays, the log
// reopens.
func (m *journaledLog) powerCut() {
	m.t.Helper()
	// The journal first: Close waits for a retirement in flight, whose
	// syncs of the log would otherwise meet its file handles closed by
	// crash and fail, leaving a journal file the test did not plan for.
	m.j.Close() // syncs nothing of its own
	crash(m.t, m.l)
	if err := m.fsys.LoseUnsyncedWrites(); err != nil {
		m.t.Fatal(err)
	}
	m.openJournal()
	m.open()
}

// check compares the log with the model: every acknowledged record at its
// offset, nothing past them.
func (m *journaledLog) check(when string) {
	m.t.Helper()
	if end := m.l.End(); end != uint64(len(m.want)) {
		m.t.Fatalf("%s: the log ends at %d, acknowledged records end at %d", when, end, len(m.want))
	}
	var got []string
	for from := uint64(0); from < m.l.Written(); {
		rs, err := m.l.ReadTo(from, 1000, 1<<20)
		if err != nil {
			m.t.Fatalf("%s: read from %d: %v", when, from, err)
		}
		for _, r := range rs {
			got = append(got, string(r.Payload))
		}
		from += uint64(len(rs))
	}
	if fmt.Sprint(got) != fmt.Sprint(m.want) {
		m.t.Fatalf("%s: the log holds\n %v\nacknowledged:\n %v", when, got, m.want)
	}
}

// A held log whose writes the journal makes durable loses no
// acknowledged record to a power cut, whatever came before it: commits
// and Appends across rolls, truncations and new writes after them,
// clean closes, the journal's retirements, and the directory removed and
// made anew (a topic deleted and created again). A truncation is never
// undone by a replay, and a removed log's bytes never reach the new one.
func TestJournaledHeldLogLosesNothingToAPowerCut(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	root := t.TempDir()
	m := &journaledLog{t: t, fsys: errorfs.New(vfs.Default), root: root,
		dir: filepath.Join(root, "topics", "t", "p00000"), now: 1000}
	m.openJournal()
	m.open()
	defer func() { m.l.Close(); m.j.Close() }()
	gen := 0
	for step := range 600 {
		m.now += int64(rng.Intn(3))
		switch x := rng.Intn(20); {
		case x < 7: // a leader's commit
			n := 1 + rng.Intn(4)
			rs := make([]Record, n)
			for i := range rs {
				rs[i].Payload = fmt.Appendf(nil, "g%d-c%d-%d", gen, step, i)
			}
			if _, err := m.l.Commit(rs); err != nil {
				t.Fatalf("step %d: commit: %v", step, err)
			}
			for _, r := range rs {
				m.want = append(m.want, string(r.Payload))
			}
		case x < 14: // a follower's Append
			n := 1 + rng.Intn(4)
			rs := make([]Record, n)
			for i := range rs {
				rs[i] = Record{Offset: m.l.End() + uint64(i), CommittedAt: m.now, Payload: fmt.Appendf(nil, "g%d-a%d-%d", gen, step, i)}
			}
			if err := m.l.Append(rs); err != nil {
				t.Fatalf("step %d: append: %v", step, err)
			}
			for _, r := range rs {
				m.want = append(m.want, string(r.Payload))
			}
		case x < 16: // a divergent tail cut
			hwm, end := m.l.HWM(), m.l.End()
			off := hwm + uint64(rng.Intn(int(end-hwm)+1))
			if err := m.l.TruncateTo(off); err != nil {
				t.Fatalf("step %d: truncate to %d: %v", step, off, err)
			}
			m.want = m.want[:off]
		case x == 16:
			m.l.Release(uint64(rng.Intn(len(m.want) + 1)))
		case x == 17: // a clean close and a reopen
			if err := m.l.Close(); err != nil {
				t.Fatalf("step %d: close: %v", step, err)
			}
			m.open()
		case x == 18: // the topic deleted and made anew
			if err := m.l.Close(); err != nil {
				t.Fatalf("step %d: close: %v", step, err)
			}
			if err := m.fsys.RemoveAll(filepath.Dir(m.dir)); err != nil {
				t.Fatal(err)
			}
			gen++
			m.want = nil
			m.open()
		default:
			m.powerCut()
			m.check(fmt.Sprintf("step %d, after a power cut", step))
		}
	}
	m.powerCut()
	m.check("the end, after a power cut")
}

// A segment whose fdatasync fails drops the journaled frames the kernel
// could not write; the log is fenced as having lost published frames,
// closes without forgetting its directory, and reopens with them put back
// from the journal.
func TestJournaledFramesComeBackAfterTheSegmentsSyncFails(t *testing.T) {
	root := t.TempDir()
	m := &journaledLog{t: t, fsys: errorfs.New(vfs.Default), root: root,
		dir: filepath.Join(root, "topics", "t", "p00000"), now: 1000}
	m.openJournal()
	defer m.j.Close()
	m.open()
	rs := make([]Record, 5)
	for i := range rs {
		rs[i] = Record{Offset: uint64(i), CommittedAt: m.now, Payload: fmt.Appendf(nil, "r%d", i)}
		m.want = append(m.want, string(rs[i].Payload))
	}
	if err := m.l.Append(rs); err != nil {
		t.Fatal(err)
	}
	m.fsys.Inject(errorfs.Rule{Ops: errorfs.OpSync, Path: ".log", Times: 1, Err: syscall.EIO, LoseUnsynced: true})
	if err := m.l.SyncJournaled(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("sync over a failing fdatasync: %v, want EIO", err)
	}
	if !m.l.LostPublished() {
		t.Fatal("a log whose journaled frames may be gone from its segment is not said to have lost them")
	}
	if err := m.l.Close(); err == nil {
		t.Fatal("Close of a log with frames not on disk answered nil")
	}
	m.fsys.Clear()
	if !m.j.Live(m.dir) {
		t.Fatal("the journal forgot a directory whose frames its segment lost")
	}
	m.open()
	defer m.l.Close()
	m.check("reopened after the failed fdatasync")
}
