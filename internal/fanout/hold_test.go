package fanout

import (
	"bytes"
	"fmt"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/topic"
)

// keysFor finds a key for each partition of an n-partition child.
func keysFor(n int) []string {
	keys := make([]string, n)
	found := 0
	for i := 0; found < n; i++ {
		k := fmt.Sprintf("key%d", i)
		if p := topic.KeyPartition([]byte(k), n); keys[p] == "" {
			keys[p] = k
			found++
		}
	}
	return keys
}

// rule retry alone: the records a cursor holds across a bucket outage are a
// copy, and the parent log's decoded frames they were read from are no
// longer reachable from the cursor: once the parent log itself lets go of
// them (here: the partition is closed, its frame cache with it), the
// garbage collector frees them while the outage goes on. Before the fix the
// cursor loop and commitSlab both kept the slab, so the copy freed nothing.
func TestHeldRecordsDoNotPinTheParentFrames(t *testing.T) {
	n := newNode(t, Config{})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 2, 0)
	n.attach("src", "dst", 0)
	keys := keysFor(2)

	// The first failed commit shows which buffers the cursor's slab points
	// into: the failed bucket's payloads alias the parent's decoded frame.
	var (
		mu     sync.Mutex
		frames []weak.Pointer[byte]
	)
	n.fc.onFail = func(_ string, _ int, recs []storage.Record) {
		mu.Lock()
		defer mu.Unlock()
		if frames == nil {
			for _, r := range recs {
				frames = append(frames, weak.Make(&r.Payload[0]))
			}
		}
	}
	n.fc.set("dst/1", true)
	recs := make([]storage.Record, 8)
	for i := range recs {
		recs[i] = storage.Record{Key: []byte(keys[i%2]), Payload: bytes.Repeat([]byte{byte('a' + i)}, 4096)}
	}
	if err := commitLocal(n.b, n.ctx(), "src", 0, recs); err != nil {
		t.Fatal(err)
	}
	recs = nil
	n.e.Start()
	waitFor(t, 10*time.Second, "a retry round after the copy", func() bool {
		tries, _ := n.fc.count("dst/1")
		return tries > 1+len(n.e.cfg.QuickRetries) // round 0's tries, then round 1 from the copy
	})
	if _, oks := n.fc.count("dst/0"); oks != 1 {
		t.Fatalf("the healthy partition committed %d times, want 1", oks)
	}
	// The parent log lets go of its frames; only a pin by the cursor can
	// keep them now.
	wl := weak.Make(n.b.Partitions().Peek("src", 0))
	n.b.Partitions().ClosePartition("src", 0)
	waitFor(t, 5*time.Second, "the closed parent log freed", func() bool { runtime.GC(); return wl.Value() == nil })
	waitFor(t, 10*time.Second, "the parent's frames freed during the outage", func() bool {
		runtime.GC()
		mu.Lock()
		defer mu.Unlock()
		for _, w := range frames {
			if w.Value() != nil {
				return false
			}
		}
		return len(frames) > 0
	})
	// The copy is whole: after the outage the held records arrive intact.
	n.fc.set("dst/1", false)
	waitFor(t, 10*time.Second, "the held records delivered", func() bool { return len(n.read("dst", 1)) == 4 })
	for i, r := range n.read("dst", 1) {
		if string(r.Key) != keys[1] || len(r.Payload) != 4096 || r.Payload[0] != byte('b'+2*i) {
			t.Fatalf("held record %d arrived as key %q, %d bytes of %q", i, r.Key, len(r.Payload), r.Payload[:1])
		}
	}
}

// rules retry alone, held records bounded: the same for a remote child:
// across a target outage the sender holds a copy of the lanes, not the
// parent's frames. The frames are found through the parent log's frame
// cache, which hands every reader of a frame the same decoded records the
// cursor got.
func TestRemoteHeldLanesDoNotPinTheParentFrames(t *testing.T) {
	tg := newTarget(t)
	tg.set(http.StatusServiceUnavailable, `{"error":"not ready"}`)
	n := newNode(t, Config{Linger: time.Millisecond, Backoff: 10 * time.Millisecond})
	n.createTopic("orders", 1, 0)
	n.attachRemote("orders", "orders-dr", tg.srv.URL, "")
	recs := make([]storage.Record, 8)
	for i := range recs {
		recs[i] = storage.Record{Key: []byte(fmt.Sprint("k", i)), Payload: bytes.Repeat([]byte{byte('a' + i)}, 4096)}
	}
	if err := commitLocal(n.b, n.ctx(), "orders", 0, recs); err != nil {
		t.Fatal(err)
	}
	recs = nil
	n.e.Start()
	requests := func() int { tg.mu.Lock(); defer tg.mu.Unlock(); return tg.requests }
	waitFor(t, 10*time.Second, "retry rounds from the copy", func() bool { return requests() > 2*remoteLanes })
	frames := parentFrames(t, n, "orders", 0)
	wl := weak.Make(n.b.Partitions().Peek("orders", 0))
	n.b.Partitions().ClosePartition("orders", 0)
	waitFor(t, 5*time.Second, "the closed parent log freed", func() bool { runtime.GC(); return wl.Value() == nil })
	waitFor(t, 10*time.Second, "the parent's frames freed during the outage", func() bool {
		runtime.GC()
		for _, w := range frames {
			if w.Value() != nil {
				return false
			}
		}
		return true
	})
	tg.set(0, "")
	waitFor(t, 10*time.Second, "the held records delivered", func() bool { return len(tg.records()) == 8 })
	for _, r := range tg.records() {
		var i int
		fmt.Sscanf(r.key, "k%d", &i)
		if len(r.payload) != 4096 || r.payload[0] != byte('a'+i) {
			t.Fatalf("held record %q arrived as %d bytes of %q", r.key, len(r.payload), r.payload[:1])
		}
	}
}

// parentFrames returns weak pointers to the payload buffers of every
// record of a parent partition, as its log's frame cache holds them.
func parentFrames(t testing.TB, n *node, topic string, p int) []weak.Pointer[byte] {
	t.Helper()
	var out []weak.Pointer[byte]
	for _, r := range n.read(topic, p) {
		out = append(out, weak.Make(&r.Payload[0]))
	}
	if len(out) == 0 {
		t.Fatal("no records")
	}
	return out
}
