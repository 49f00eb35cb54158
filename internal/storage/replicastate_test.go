package storage

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The replica.state file (replicastate.go): canonical encoding, missing =
// zero, damaged = an error Open reports, and a held log reopens visible at
// its checkpoint.

func FuzzDecodeReplicaState(f *testing.F) {
	f.Add(encodeReplicaState(ReplicaState{}))
	f.Add(encodeReplicaState(ReplicaState{LastEpoch: 3, Committed: 1 << 40}))
	f.Add(encodeReplicaState(ReplicaState{LastEpoch: 1})[:27])
	f.Add(append(encodeReplicaState(ReplicaState{Committed: 1}), 0))
	f.Add(make([]byte, replicaStateSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := decodeReplicaState(b)
		if err != nil {
			if !errors.Is(err, errBadReplicaState) {
				t.Fatalf("refusal %v does not wrap errBadReplicaState", err)
			}
			return
		}
		// Canonical: whatever is accepted is exactly what the encoder writes.
		if got := encodeReplicaState(st); !bytes.Equal(got, b) {
			t.Fatalf("accepted %x, which decodes to %+v and re-encodes as %x", b, st, got)
		}
	})
}

func TestReplicaStateRoundTrip(t *testing.T) {
	for _, st := range []ReplicaState{{}, {LastEpoch: 1, Committed: 0}, {LastEpoch: 1<<64 - 1, Committed: 1<<64 - 1}} {
		got, err := decodeReplicaState(encodeReplicaState(st))
		if err != nil || got != st {
			t.Fatalf("%+v decodes as %+v, %v", st, got, err)
		}
	}
	b := encodeReplicaState(ReplicaState{LastEpoch: 2, Committed: 9})
	for i := range b {
		c := bytes.Clone(b)
		c[i] ^= 0x40
		if _, err := decodeReplicaState(c); err == nil {
			t.Fatalf("a flipped bit in byte %d was accepted", i)
		}
	}
}

// A held log reopens with readers at min(checkpoint, End): a checkpoint
// of the committed point is always safe to reopen with, and never lets
// readers past what the log holds.
func TestHeldReopenStartsVisibleAtTheCheckpoint(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, heldOpts())
	if got := l.ReplicaState(); got != (ReplicaState{}) {
		t.Fatalf("a fresh held log's state %+v, want zero (missing file)", got)
	}
	commitT(t, l, recs("a", 5, false))
	l.Release(4)
	if err := l.SaveReplicaState(ReplicaState{LastEpoch: 2, Committed: 3}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = openT(t, dir, heldOpts())
	if l.HWM() != 3 || l.End() != 5 || l.OpenHWM() != 3 {
		t.Fatalf("reopened: hwm %d, end %d, OpenHWM %d; want 3, 5, 3", l.HWM(), l.End(), l.OpenHWM())
	}
	if got := l.ReplicaState(); got != (ReplicaState{LastEpoch: 2, Committed: 3}) {
		t.Fatalf("reopened state %+v", got)
	}
	if got := readAll(t, l, 0); len(got) != 3 {
		t.Fatalf("readers see %d records after reopening at checkpoint 3", len(got))
	}
	// A checkpoint past the local end (learned from the leader before the
	// records arrived) caps at the end.
	if err := l.SaveReplicaState(ReplicaState{LastEpoch: 2, Committed: 50}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = openT(t, dir, heldOpts())
	defer l.Close()
	if l.HWM() != 5 {
		t.Fatalf("reopened with checkpoint 50 and end 5: hwm %d", l.HWM())
	}
	// The same directory opened unheld (RF 1) sees everything.
	l.Close()
	u := openT(t, dir, Options{})
	defer u.Close()
	if u.HWM() != 5 {
		t.Fatalf("unheld reopen: hwm %d", u.HWM())
	}
}

func TestDamagedReplicaStateFailsOpen(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, heldOpts())
	if err := l.SaveReplicaState(ReplicaState{LastEpoch: 1, Committed: 0}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	path := filepath.Join(dir, ReplicaStateFile)
	b, _ := os.ReadFile(path)
	b[10] ^= 1
	os.WriteFile(path, b, 0o644)
	if _, err := Open(dir, heldOpts()); !errors.Is(err, errBadReplicaState) {
		t.Fatalf("Open with a damaged replica.state: %v, want errBadReplicaState", err)
	}
	if _, err := ReadReplicaStateFS(nil, dir); !errors.Is(err, errBadReplicaState) {
		t.Fatalf("ReadReplicaStateFS: %v", err)
	}
	// Not held, the file is not read.
	u := openT(t, dir, Options{})
	u.Close()
}

// A consumer frontier vouches for what readers saw, so a held log reopens
// visible at least up to it (within what it holds): a frontier persisted
// after the last checkpoint is not clamped back and redelivered. One past
// the end vouches for nothing.
func TestHeldReopenStartsVisibleAtLeastAtTheFrontier(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, heldOpts())
	commitT(t, l, recs("a", 6, false))
	l.Release(5)
	if err := l.SaveReplicaState(ReplicaState{LastEpoch: 1, Committed: 2}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	offsets := filepath.Join(dir, ConsumerOffsetFile)
	for _, c := range []struct{ frontier, want uint64 }{{4, 4}, {1, 2}, {9, 2}} {
		if err := WriteOffsetFile(offsets, c.frontier); err != nil {
			t.Fatal(err)
		}
		l = openT(t, dir, heldOpts())
		got := l.HWM()
		l.Close()
		if got != c.want {
			t.Fatalf("checkpoint 2, end 6, frontier %d: reopened visible at %d, want %d", c.frontier, got, c.want)
		}
	}
}
