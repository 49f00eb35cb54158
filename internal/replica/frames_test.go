package replica

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/storage"
)

// framesTransport calls a Leader in process and counts the answers that
// carried frames; old makes it a follower of a release before frames
// (its fetches do not ask for them).
type framesTransport struct {
	l      *Leader
	mu     sync.Mutex
	old    bool
	frames int
}

func (d *framesTransport) Fetch(ctx context.Context, _ string, req FetchRequest) (FetchResponse, error) {
	d.mu.Lock()
	if d.old {
		req.Frames = false
	}
	d.mu.Unlock()
	resp, err := d.l.HandleFetch(ctx, req)
	if len(resp.Frames) > 0 {
		d.mu.Lock()
		d.frames++
		d.mu.Unlock()
	}
	return resp, err
}

// A follower over a storage log copies a storage leader's frames byte
// for byte, and takes records from a leader's answer where frames do not
// serve (a fetch that did not ask for them).
func TestFollowerCopiesTheLeadersFrames(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	md := newMemMeta(modelNodes, func(string) bool { return true })
	ldir, fdir := t.TempDir(), t.TempDir()
	open := func(dir string) *storage.Log {
		l, err := storage.Open(dir, storage.Options{Held: true, SegmentBytes: 4096})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Close() })
		return l
	}
	llog, flog := open(ldir), open(fdir)
	seq := uint64(0)
	commit := func(n int) {
		recs := make([]storage.Record, n)
		src := storage.Source{Origin: 0xA11CE}
		for i := range recs {
			seq++
			recs[i] = storage.Record{Key: []byte{byte(seq)}, Payload: bytes.Repeat([]byte{byte(seq)}, 100)}
			src.Seqs = append(src.Seqs, seq)
		}
		if _, _, err := llog.CommitFrom(recs, src); err != nil {
			t.Fatal(err)
		}
	}
	commit(5) // history from before the partition was replicated
	lead, err := NewLeader(LeaderConfig{Self: "a", View: md.view(), Log: llog, Proposer: md, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if err := lead.begin(context.Background()); err != nil {
		t.Fatal(err)
	}
	lead.Update(md.view())
	tr := &framesTransport{l: lead, old: true}
	f, err := NewFollower(FollowerConfig{Self: "b", View: md.view(), Log: flog, Transport: tr, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	runFollower(t, f)
	waitFor(t, func() bool { return flog.End() == 5 })
	tr.mu.Lock()
	if tr.frames != 0 {
		t.Fatalf("%d answers carried frames to a follower that did not ask for them", tr.frames)
	}
	tr.old = false
	tr.mu.Unlock()
	for i := range 40 {
		commit(1 + i%4)
	}
	waitFor(t, func() bool { return flog.End() == llog.Written() })
	tr.mu.Lock()
	frames := tr.frames
	tr.mu.Unlock()
	if frames == 0 {
		t.Fatal("no fetch answer carried frames")
	}
	want, _ := llog.ReadTo(0, 1000, 1<<20)
	got, _ := flog.ReadTo(0, 1000, 1<<20)
	if len(got) != len(want) {
		t.Fatalf("follower holds %d records, leader %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Offset != w.Offset || g.CommittedAt != w.CommittedAt || !bytes.Equal(g.Key, w.Key) || !bytes.Equal(g.Payload, w.Payload) ||
			g.Origin != w.Origin || g.Seq != w.Seq {
			t.Fatalf("record %d: follower %+v, leader %+v", i, g, w)
		}
	}
	// Past the records copied as records, the segments are the leader's
	// bytes: the follower's newest segment ends as the leader's does.
	last := func(dir string) []byte {
		m, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		if len(m) == 0 {
			t.Fatalf("no segment in %s", dir)
		}
		b, _ := os.ReadFile(m[len(m)-1])
		return b
	}
	lb, fb := last(ldir), last(fdir)
	if n := min(len(lb), len(fb), 1000); n < 200 || !bytes.Equal(lb[len(lb)-n:], fb[len(fb)-n:]) {
		t.Fatalf("the follower's newest segment (%d bytes) does not end as the leader's (%d bytes)", len(fb), len(lb))
	}
}
