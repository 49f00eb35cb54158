package messageid

import (
	"fmt"
	"strings"
	"testing"
)

// Ids fit 40 characters, use only the lower-case alphabet, and different
// sources or positions never share one: a kind's fields are fixed width
// and the kinds differ in their first character.
func TestIDsAreShortAndDistinct(t *testing.T) {
	seen := map[string]string{}
	add := func(what, id string) {
		t.Helper()
		if len(id) > MaxLen || strings.Trim(id[1:], "0123456789abcdefghijklmnopqrstuv") != "" {
			t.Fatalf("%s: id %q", what, id)
		}
		if prev, ok := seen[id]; ok {
			t.Fatalf("%s and %s share id %q", what, prev, id)
		}
		seen[id] = what
	}
	max := ^uint64(0)
	for _, o := range []uint64{1, 2, 0xA11CE, max} {
		for _, s := range []uint64{1, 2, 255, 256, max} {
			add(fmt.Sprintf("wal %x/%d", o, s), FromWAL(o, s))
		}
	}
	for _, inc := range []uint64{1, 2, 1 << 32, max} {
		for _, p := range []int{0, 1, 255, 65535} {
			for _, off := range []uint64{0, 1, 256, max} {
				add(fmt.Sprintf("position %d/%d/%d", inc, p, off), FromPosition(inc, p, off))
			}
		}
	}
	if got := FromWAL(max, max); len(got) != 27 || got[0] != 'w' {
		t.Fatalf("wal id %q", got)
	}
	if got := FromPosition(max, 65535, max); len(got) != 33 || got[0] != 'p' {
		t.Fatalf("position id %q", got)
	}
}

// The id is a pure function of what the log holds: the same inputs give
// the same id (a replay, another node, a restart), ids of one WAL sort by
// seq, and a record without a source is named by its position.
func TestOfIsStable(t *testing.T) {
	a := Of("orders", 7, 2, 100, 0xA11CE, 41)
	if a != Of("orders", 7, 5, 900, 0xA11CE, 41) || a != FromWAL(0xA11CE, 41) {
		t.Fatalf("a WAL record's id depends on where it is: %q", a)
	}
	if !(FromWAL(0xA11CE, 41) < FromWAL(0xA11CE, 42) && FromWAL(0xA11CE, 255) < FromWAL(0xA11CE, 256)) {
		t.Fatal("ids of one WAL do not sort by seq")
	}
	if got := Of("orders", 7, 2, 100, 0, 0); got != FromPosition(7, 2, 100) {
		t.Fatalf("position id %q", got)
	}
	// No incarnation: the name stands in, never an incarnation's value.
	if Of("a", 0, 0, 0, 0, 0) == Of("b", 0, 0, 0, 0, 0) || Incarnation("a", 0)>>63 != 1 {
		t.Fatal("topics without an incarnation share ids")
	}
}

var sink string

// Making an id allocates its string only, and AppendOf nothing into a
// buffer with spare capacity: AppendOf gives what Of gives.
func TestIDsAllocateOnce(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { sink = FromWAL(0xA11CE, 42) }); n != 1 {
		t.Fatalf("FromWAL: %.0f allocations", n)
	}
	if n := testing.AllocsPerRun(100, func() { sink = FromPosition(7, 3, 99) }); n != 1 {
		t.Fatalf("FromPosition: %.0f allocations", n)
	}
	buf := make([]byte, 0, 2*MaxLen)
	if n := testing.AllocsPerRun(100, func() {
		buf = AppendOf(buf[:0], "t", 7, 3, 99, 0, 0)
		buf = AppendOf(buf, "t", 7, 3, 99, 0xA11CE, 42)
	}); n != 0 {
		t.Fatalf("AppendOf: %.0f allocations", n)
	}
	if string(buf) != FromPosition(7, 3, 99)+FromWAL(0xA11CE, 42) {
		t.Fatalf("AppendOf gave %q", buf)
	}
}
