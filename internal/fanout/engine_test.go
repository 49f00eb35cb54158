package fanout

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/topic"
)

// rules slab order per bucket, attach points, start at the attach point:
// everything committed after the attach is copied with its key; nothing
// before the attach point is; keyed records land in FNV-1a(key) mod n;
// keyless ones keep their parent index when the counts match and rotate
// when they differ.
func TestCopiesFromAttachPointWithKeys(t *testing.T) {
	n := newNode(t, Config{})
	n.createTopic("orders", 3, 0)
	n.createTopic("same", 3, 0)
	n.createTopic("wide", 5, 0)
	for p := 0; p < 3; p++ {
		n.commit("orders", p, "before", "") // before the attach: never copied
	}
	n.attach("orders", "same", 0)
	n.attach("orders", "wide", 0)
	n.e.Start()
	for p := 0; p < 3; p++ {
		n.commit("orders", p, "k1", "k2", "", "k3", "")
	}
	waitFor(t, 10*time.Second, "15 copies in each child", func() bool {
		return n.total("same", 3) == 15 && n.total("wide", 5) == 15
	})
	for _, child := range []struct {
		name  string
		parts int
	}{{"same", 3}, {"wide", 5}} {
		keyless := map[int]int{}
		for cp := 0; cp < child.parts; cp++ {
			for _, r := range n.read(child.name, cp) {
				if strings.Contains(string(r.Payload), "before") {
					t.Fatalf("%s: a record from before the attach was copied", child.name)
				}
				var pp int
				var key string
				fmt.Sscanf(strings.ReplaceAll(string(r.Payload), "|", " "), "orders p%d %s", &pp, &key)
				switch {
				case len(r.Key) > 0:
					if want := topic.KeyPartition(r.Key, child.parts); cp != want {
						t.Errorf("%s: key %q in partition %d, want %d", child.name, r.Key, cp, want)
					}
					if string(r.Key) != key {
						t.Errorf("%s: key %q lost or changed (payload says %q)", child.name, r.Key, key)
					}
				case child.parts == 3:
					if cp != pp {
						t.Errorf("same: keyless record of parent partition %d landed in %d", pp, cp)
					}
				default:
					keyless[cp]++
				}
			}
		}
		if child.parts == 5 && len(keyless) < 3 {
			t.Errorf("wide: 6 keyless records rotated over only %d partitions: %v", len(keyless), keyless)
		}
	}
}

// rules retry alone, re-check every round, commit before advance, no
// reroute: a failing child partition is the only one retried; the healthy
// ones get no duplicate; the cursor file does not move until every bucket
// committed; a detach during the outage stops the retries. The engine runs
// on a fake clock: every retry is a step.
func TestFailingBucketRetriedAloneAndCursorHolds(t *testing.T) {
	clk := clock.NewFake(time.Now())
	n := newNode(t, Config{Clock: clk})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 3, 0)
	child := n.attach("src", "dst", 0)
	// Find keys for each child partition.
	keyFor := map[int]string{}
	for i := 0; len(keyFor) < 3; i++ {
		k := fmt.Sprintf("key%d", i)
		if _, ok := keyFor[topic.KeyPartition([]byte(k), 3)]; !ok {
			keyFor[topic.KeyPartition([]byte(k), 3)] = k
		}
	}
	n.fc.set("dst/1", true)
	n.e.Start()
	n.commit("src", 0, keyFor[0], keyFor[1], keyFor[2])
	drive(t, clk, 2, 5*time.Millisecond, "several failed rounds on dst/1", func() bool {
		tries, _ := n.fc.count("dst/1")
		return tries >= 9 // 3 rounds of 3 quick tries
	})
	for _, p := range []string{"dst/0", "dst/2"} {
		if tries, oks := n.fc.count(p); tries != 1 || oks != 1 {
			t.Fatalf("%s committed %d times in %d tries; a healthy partition must get exactly one", p, oks, tries)
		}
	}
	path := filepath.Join(n.dir, "topics", "src", "p00000", CursorFileName("dst"))
	st, ok, err := ReadCursorFile(path)
	if err != nil || !ok || st.NextOffset != 0 || st.Epoch != child.AttachEpoch {
		t.Fatalf("cursor moved during the outage: %+v %v %v", st, ok, err)
	}
	// Recovery: the held record commits, then the cursor advances.
	n.fc.set("dst/1", false)
	drive(t, clk, 2, 5*time.Millisecond, "cursor at 3", func() bool {
		st, _, _ := ReadCursorFile(path)
		return st.NextOffset == 3
	})
	if got := n.total("dst", 3); got != 3 {
		t.Fatalf("child holds %d records after recovery, want 3 (no duplicates)", got)
	}
	// Outage again, then a detach: retries stop.
	n.fc.set("dst/1", true)
	n.commit("src", 0, keyFor[1])
	drive(t, clk, 2, 5*time.Millisecond, "failing again", func() bool { tries, _ := n.fc.count("dst/1"); return tries >= 12 })
	if err := n.e.Detach(n.ctx(), "src", "dst"); err != nil {
		t.Fatal(err)
	}
	drive(t, clk, 1, 5*time.Millisecond, "cursor stopped", func() bool {
		n.e.mu.Lock()
		defer n.e.mu.Unlock()
		return len(n.e.running) == 0
	})
	// Only the reconciler's ticker is left on the clock: no cursor waits
	// to retry, so ten backoffs go by with no try.
	before, _ := n.fc.count("dst/1")
	for i := 0; i < 10; i++ {
		step(t, clk, 1, n.e.cfg.Backoff)
	}
	parked(t, clk, 1)
	if after, _ := n.fc.count("dst/1"); after != before || clk.Waiters() != 1 {
		t.Fatalf("retries went on after the detach: %d → %d (%d waiters on the clock)", before, after, clk.Waiters())
	}
}

// rules attach epochs, cursor file, anchor on the leader's word: a cursor
// file of another epoch is never resumed; a re-attach starts at the new
// attach point; a deleted file replays from the attach point.
func TestEpochsAndLostCursorFile(t *testing.T) {
	n := newNode(t, Config{})
	n.createTopic("p", 1, 0)
	n.createTopic("c", 1, 0)
	n.attach("p", "c", 0)
	n.e.Start()
	n.commit("p", 0, "a", "b")
	waitFor(t, 10*time.Second, "2 copies", func() bool { return n.total("c", 1) == 2 })
	if err := n.e.Detach(n.ctx(), "p", "c"); err != nil {
		t.Fatal(err)
	}
	n.commit("p", 0, "while-detached")
	second := n.attach("p", "c", 0)
	if second.AttachOffsets[0] != 3 {
		t.Fatalf("re-attach point %v, want [3]", second.AttachOffsets)
	}
	n.commit("p", 0, "after")
	waitFor(t, 10*time.Second, "the post-reattach record", func() bool { return n.total("c", 1) == 3 })
	for _, r := range n.read("c", 0) {
		if string(r.Key) == "while-detached" {
			t.Fatal("a record committed while detached was copied: the old epoch's file was resumed")
		}
	}
	path := filepath.Join(n.dir, "topics", "p", "p00000", CursorFileName("c"))
	waitFor(t, 10*time.Second, "cursor file of the new epoch at 4", func() bool {
		st, _, _ := ReadCursorFile(path)
		return st.Epoch == second.AttachEpoch && st.NextOffset == 4
	})
	// Lose the file: the cursor restarts from the attach point (duplicates,
	// never a skip to the tail).
	n.e.Close()
	if err := removeFile(path); err != nil {
		t.Fatal(err)
	}
	e2 := n.newEngine(n.e.cfg)
	t.Cleanup(e2.Close)
	e2.Start()
	waitFor(t, 10*time.Second, "replay from the attach point", func() bool { return n.total("c", 1) == 4 })
}
