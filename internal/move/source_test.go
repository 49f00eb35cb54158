package move

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/refusal"
)

// The source refuses what it must, each with the refusal kind node RPC
// gives its status and code (at the edge, not here): a name that is not
// a plain file name, a partition it does not own, a file it does not
// have, a thaw once another node owns the partition.
func TestSourceRefusals(t *testing.T) {
	p := newPair(t)
	p.fill(10)
	ctx := p.ctx()
	for _, name := range []string{"", ".", "..", "../hwm", "a/b"} {
		if _, err := p.src.source.MoveRead(ctx, "orders", 0, name, 0, 10); !errors.Is(err, refusal.ErrInvalid) {
			t.Errorf("MoveRead(%q) = %v, want %s", name, err, refusal.ErrInvalid)
		}
	}
	if _, err := p.src.source.MoveRead(ctx, "orders", 0, "nope", 0, 10); !errors.Is(err, refusal.ErrNotFound) {
		t.Errorf("a missing file: %v, want %s", err, refusal.ErrNotFound)
	}
	if _, err := p.dst.source.MoveRead(ctx, "orders", 0, "hwm", 0, 10); !errors.Is(err, refusal.ErrNotOwner) {
		t.Errorf("MoveRead on a node that does not own the partition: %v, want %s", err, refusal.ErrNotOwner)
	}
	if _, _, err := p.dst.source.MoveFiles(ctx, "orders", 0); !errors.Is(err, refusal.ErrNotOwner) {
		t.Errorf("MoveFiles on a node that does not own the partition: %v, want %s", err, refusal.ErrNotOwner)
	}
	if _, err := p.dst.source.MoveFreeze(ctx, "orders", 0, time.Minute, "A"); !errors.Is(err, refusal.ErrNotOwner) {
		t.Errorf("MoveFreeze on a node that does not own the partition: %v, want %s", err, refusal.ErrNotOwner)
	}
	// After a flip, the old owner's freeze stays whatever a session asks.
	if _, err := p.src.source.MoveFreeze(ctx, "orders", 0, time.Minute, "A"); err != nil {
		t.Fatal(err)
	}
	p.target()
	if err := p.ms.FlipOwner(ctx, "orders", 0, "src", "dst"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.src.source.MoveFreeze(ctx, "orders", 0, 0, "A"); !errors.Is(err, refusal.ErrConflict) {
		t.Errorf("a thaw after the flip: %v, want %s", err, refusal.ErrConflict)
	}
	if _, ok := p.src.freezes.Admit("orders", 0); ok {
		t.Fatal("a thaw after the flip opened the stale copy")
	}
	// The new owner never installs a copy over the partition it serves.
	if err := p.w.install("orders", 0, nil); !errors.Is(err, refusal.ErrConflict) {
		t.Errorf("an install on the owner: %v, want %s", err, refusal.ErrConflict)
	}
}

// The listing a copy takes never names the freeze marker (this node's
// state, not the partition's), and the freeze answers the high watermark
// with the consumer frontier already written.
func TestSourceListsWithoutTheMarker(t *testing.T) {
	p := newPair(t)
	p.fill(40)
	hwm, err := p.src.source.MoveFreeze(p.ctx(), "orders", 0, time.Minute, "A")
	if err != nil || hwm != 40 {
		t.Fatalf("MoveFreeze = %d %v, want 40", hwm, err)
	}
	if _, err := os.Stat(filepath.Join(p.src.partDir(t), movingMarker)); err != nil {
		t.Fatalf("no marker: %v", err)
	}
	files, got, err := p.src.source.MoveFiles(p.ctx(), "orders", 0)
	if err != nil || got != 40 || len(files) == 0 {
		t.Fatalf("MoveFiles = %v %d %v", files, got, err)
	}
	for _, f := range files {
		if f.Name == movingMarker {
			t.Fatal("the freeze marker is listed for the copy")
		}
	}
}
