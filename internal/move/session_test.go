package move

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/narad-io/narad/internal/storage"
)

// A session copies every record (across segments), installs the copy and
// flips ownership; the source stays frozen: its copy is stale now.
func TestSessionMovesAPartition(t *testing.T) {
	p := newPair(t)
	p.fill(300)
	if err := p.w.session(p.ctx(), p.target()); err != nil {
		t.Fatal(err)
	}
	if a := p.ms.Assignments("orders")[0]; a.Owner != "dst" || a.Target != "" {
		t.Fatalf("after the move: %+v", a)
	}
	l, err := p.dst.b.Partitions().Get("orders", 0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := l.Read(0, 1000, 1<<30, storage.NoDueLimit)
	if err != nil || len(res.Records) != 300 || l.HWM() != 300 {
		t.Fatalf("the moved copy: %d records, hwm %d, %v", len(res.Records), l.HWM(), err)
	}
	for i, r := range res.Records {
		if want := fmt.Sprintf("record-%04d-%0100d", i, i); string(r.Payload) != want {
			t.Fatalf("record %d is %q", i, r.Payload)
		}
		// Its WAL source, hence its message id, moved with it.
		if r.Origin != fillOrigin || r.Seq != uint64(3*i+1) {
			t.Fatalf("record %d has WAL source %x/%d after the move", i, r.Origin, r.Seq)
		}
	}
	for _, ttl := range p.remote.freezeCalls() {
		if ttl == 0 {
			t.Fatal("the source was thawed after a successful flip")
		}
	}
	if _, ok := p.src.freezes.Admit("orders", 0); ok {
		t.Fatal("the source's stale copy admits commits after the flip")
	}
	if _, err := os.Stat(filepath.Join(p.dst.partDir(t), movingMarker)); !os.IsNotExist(err) {
		t.Fatalf("the installed copy carries the source's freeze marker: %v", err)
	}
	if _, err := os.Stat(filepath.Join(p.dst.dir, "moves", "orders")); err == nil {
		if ents, _ := os.ReadDir(filepath.Join(p.dst.dir, "moves", "orders")); len(ents) != 0 {
			t.Fatalf("staged copies left behind: %v", ents)
		}
	}
}

// A flip the leader refuses leaves the source authoritative: the installed
// copy is removed and the source thawed.
func TestSessionRefusedFlipRollsBack(t *testing.T) {
	p := newPair(t)
	p.fill(50)
	a := p.target()
	p.remote.flipErr = errors.New("refused")
	if err := p.w.session(p.ctx(), a); err == nil {
		t.Fatal("a refused flip reported success")
	}
	if _, err := os.Stat(p.dst.partDir(t)); !os.IsNotExist(err) {
		t.Fatalf("the copy is still installed: %v", err)
	}
	if calls := p.remote.freezeCalls(); calls[len(calls)-1] != 0 {
		t.Fatal("the source was not thawed")
	}
	if err := p.commitAtSource(); err != nil {
		t.Fatalf("the source takes no commit after a failed move: %v", err)
	}
}

// A flip whose answer was lost but which did happen: the session asks the
// leader and keeps the copy (dropping it would lose the partition).
func TestSessionLostFlipAnswerKeepsTheCopy(t *testing.T) {
	p := newPair(t)
	p.fill(50)
	p.remote.flipErr, p.remote.flipDoes = errors.New("connection reset"), true
	if err := p.w.session(p.ctx(), p.target()); err != nil {
		t.Fatalf("the flip happened, the session says %v", err)
	}
	l, err := p.dst.b.Partitions().Get("orders", 0)
	if err != nil || l.HWM() != 50 {
		t.Fatalf("the copy after a lost flip answer: %v %v", l, err)
	}
}

// If the source's high watermark moved between the copy and the flip (a
// lapsed freeze let a commit in), the session gives up before installing.
func TestSessionAbortsWhenTheSourceMoved(t *testing.T) {
	p := newPair(t)
	p.fill(50)
	p.remote.hwmShift = 1
	if err := p.w.session(p.ctx(), p.target()); err == nil {
		t.Fatal("a copy missing a record was installed")
	}
	if a := p.ms.Assignments("orders")[0]; a.Owner != "src" {
		t.Fatalf("ownership flipped: %+v", a)
	}
	if _, err := os.Stat(p.dst.partDir(t)); !os.IsNotExist(err) {
		t.Fatalf("something was installed: %v", err)
	}
}

// A file the source rewrites in place (a fan-out cursor) is fetched again
// until the copy reads back whole; one that never does fails the session.
func TestSessionRefetchesFilesCaughtMidRewrite(t *testing.T) {
	p := newPair(t)
	p.fill(20)
	srcDir := p.src.partDir(t)
	if err := os.WriteFile(filepath.Join(srcDir, "fanout-child.offset"), []byte("cursor"), 0o644); err != nil {
		t.Fatal(err)
	}
	torn := 2 // the first two copies read back torn
	checks := 0
	p.w.cfg.InPlace = func(name, path string) (bool, error) {
		if name != "fanout-child.offset" {
			return false, nil
		}
		checks++
		if checks <= torn {
			return true, errors.New("torn")
		}
		return true, nil
	}
	if err := p.w.session(p.ctx(), p.target()); err != nil {
		t.Fatalf("a cursor file torn twice: %v", err)
	}
	if checks != torn+1 {
		t.Fatalf("the cursor file was checked %d times, want %d", checks, torn+1)
	}
	b, err := os.ReadFile(filepath.Join(p.dst.partDir(t), "fanout-child.offset"))
	if err != nil || string(b) != "cursor" {
		t.Fatalf("the copied cursor file: %q %v", b, err)
	}

	q := newPair(t)
	q.fill(20)
	if err := os.WriteFile(filepath.Join(q.src.partDir(t), "fanout-child.offset"), []byte("cursor"), 0o644); err != nil {
		t.Fatal(err)
	}
	q.w.cfg.InPlace = func(name, path string) (bool, error) { return name == "fanout-child.offset", errors.New("torn") }
	if err := q.w.session(q.ctx(), q.target()); err == nil {
		t.Fatal("a cursor file that never reads back whole was installed")
	}
	if a := q.ms.Assignments("orders")[0]; a.Owner != "src" {
		t.Fatalf("ownership flipped: %+v", a)
	}
}
