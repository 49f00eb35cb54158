package move

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// A freeze belongs to the session that set it last: another session's
// late thaw leaves it; an expiry sweep lifts only the freeze it saw
// expire; the marker on disk follows.
func TestFreezeHoldersAndExpiry(t *testing.T) {
	p := newPair(t)
	p.fill(10)
	ctx := p.ctx()
	marker := filepath.Join(p.src.partDir(t), movingMarker)
	src := p.src.source
	if _, err := src.MoveFreeze(ctx, "orders", 0, time.Hour, "A"); err != nil {
		t.Fatal(err)
	}
	if p.commitAtSource() == nil {
		t.Fatal("a frozen partition took a commit")
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("no marker while frozen: %v", err)
	}
	if _, err := src.MoveFreeze(ctx, "orders", 0, time.Hour, "B"); err != nil { // B renews it: B's now
		t.Fatal(err)
	}
	if _, err := src.MoveFreeze(ctx, "orders", 0, 0, "A"); err != nil || p.commitAtSource() == nil {
		t.Fatalf("an earlier session's thaw lifted a freeze another session holds (%v)", err)
	}
	if len(p.src.freezes.expired()) != 0 {
		t.Fatal("a live freeze listed as expired")
	}
	// Expiry: only the very freeze seen expired is lifted.
	p.clk.Advance(time.Hour)
	seen := p.src.freezes.expired()
	if len(seen) != 1 {
		t.Fatalf("expired freezes %v", seen)
	}
	if _, err := src.MoveFreeze(ctx, "orders", 0, time.Minute, "C"); err != nil { // renewed after the sweep looked
		t.Fatal(err)
	}
	p.clk.Advance(time.Minute)
	if ok, _ := p.src.freezes.liftExpired(seen[0], p.src.partDir(t)); ok || p.commitAtSource() == nil {
		t.Fatal("the sweep lifted a freeze renewed after it looked")
	}
	if ok, err := p.src.freezes.liftExpired(p.src.freezes.expired()[0], p.src.partDir(t)); !ok || err != nil {
		t.Fatalf("lifting the expired freeze: %v %v", ok, err)
	}
	if err := p.commitAtSource(); err != nil {
		t.Fatalf("a thawed partition refuses commits: %v", err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the marker outlived the freeze: %v", err)
	}
}

// A freeze's TTL runs on the node's clock: not expired a moment before
// it, expired at it; renewing starts it again.
func TestFreezeTTLOnTheClock(t *testing.T) {
	p := newPair(t)
	p.fill(10)
	if _, err := p.src.source.MoveFreeze(p.ctx(), "orders", 0, freezeTTL, "A"); err != nil {
		t.Fatal(err)
	}
	p.clk.Advance(freezeTTL - time.Millisecond)
	if got := p.src.freezes.expired(); len(got) != 0 {
		t.Fatalf("expired %v before its TTL", got)
	}
	if _, err := p.src.source.MoveFreeze(p.ctx(), "orders", 0, freezeTTL, "A"); err != nil { // renewed
		t.Fatal(err)
	}
	p.clk.Advance(freezeTTL - time.Millisecond)
	if got := p.src.freezes.expired(); len(got) != 0 {
		t.Fatalf("a renewed freeze expired %v on its first TTL", got)
	}
	p.clk.Advance(time.Millisecond)
	if got := p.src.freezes.expired(); len(got) != 1 || got[0].topic != "orders" || got[0].p != 0 {
		t.Fatalf("at its TTL: expired %v", got)
	}
}

// A freeze survives a restart (its marker), already expired, and lifts
// only when the leader confirms this node still owns the partition.
func TestFreezeSurvivesARestart(t *testing.T) {
	p := newPair(t)
	p.fill(10)
	if _, err := p.src.source.MoveFreeze(p.ctx(), "orders", 0, time.Hour, "A"); err != nil {
		t.Fatal(err)
	}
	p.src.close()
	again := p.node("src", p.src.dir)
	if _, ok := again.freezes.Admit("orders", 0); ok {
		t.Fatal("a restarted node admits commits into a partition frozen before the restart")
	}
	if got := again.freezes.expired(); len(got) != 1 {
		t.Fatalf("a reloaded freeze is not expired: %v", got)
	}
	w := p.worker(again, p.remote)
	// Another node owns it (the flip happened): the freeze stays.
	if err := p.ms.SetTarget(p.ctx(), "orders", 0, "src", "dst"); err != nil {
		t.Fatal(err)
	}
	if err := p.ms.FlipOwner(p.ctx(), "orders", 0, "src", "dst"); err != nil {
		t.Fatal(err)
	}
	w.liftExpired(p.ctx())
	if _, ok := again.freezes.Admit("orders", 0); ok {
		t.Fatal("an expired freeze lifted though another node owns the partition now")
	}
	// Ownership back here (a move back): now it may lift.
	if err := p.ms.SetTarget(p.ctx(), "orders", 0, "dst", "src"); err != nil {
		t.Fatal(err)
	}
	if err := p.ms.FlipOwner(p.ctx(), "orders", 0, "dst", "src"); err != nil {
		t.Fatal(err)
	}
	w.liftExpired(p.ctx())
	done, ok := again.freezes.Admit("orders", 0)
	if !ok {
		t.Fatal("an expired freeze did not lift though the leader confirms this node owns the partition")
	}
	done()
	if _, err := os.Stat(filepath.Join(again.partDir(t), movingMarker)); !os.IsNotExist(err) {
		t.Fatalf("the marker outlived the freeze: %v", err)
	}
}

// TestFreezeMarkerThatCannotBeCheckedFailsTheLoad: a freeze survives a
// restart through its marker file. A marker whose check fails (EIO on
// stat) is not an absent marker — the copy would take commits a later
// shed deletes — so loading fails; a missing marker leaves the partition
// open, a present one freezes it.
func TestFreezeMarkerThatCannotBeCheckedFailsTheLoad(t *testing.T) {
	dir := t.TempDir()
	efs := errorfs.New(vfs.Default)
	fz := NewFreezes(clock.NewFake(time.Unix(1000, 0)), efs)
	if err := fz.load("orders", 0, dir); err != nil {
		t.Fatalf("load with no marker: %v", err)
	}
	if done, ok := fz.Admit("orders", 0); !ok {
		t.Fatal("no marker, yet the partition is frozen")
	} else {
		done()
	}
	in := efs.Inject(errorfs.Rule{Ops: errorfs.OpStat, Path: string(filepath.Separator) + movingMarker, Err: syscall.EIO})
	if err := fz.load("orders", 1, dir); !errors.Is(err, syscall.EIO) {
		t.Fatalf("load with a marker that cannot be checked: %v, want the EIO", err)
	}
	in.Remove()
	if err := os.WriteFile(filepath.Join(dir, movingMarker), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fz.load("orders", 2, dir); err != nil {
		t.Fatal(err)
	}
	if _, ok := fz.Admit("orders", 2); ok {
		t.Fatal("a marker on disk, yet the partition takes commits")
	}
}
