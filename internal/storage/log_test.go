package storage

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
)

func TestCommitReadRoundTrip(t *testing.T) {
	for _, codec := range []Codec{CodecNone, CodecZstd} {
		t.Run(codec.String(), func(t *testing.T) {
			dir := t.TempDir()
			l := openT(t, dir, Options{Codec: codec})
			defer l.Close()
			keyed := recs("a", 5, true)
			keyless := recs("b", 3, false)
			if b := commitT(t, l, keyed); b != 0 {
				t.Fatalf("first base = %d, want 0", b)
			}
			if b := commitT(t, l, keyless); b != 5 {
				t.Fatalf("second base = %d, want 5", b)
			}
			if l.HWM() != 8 {
				t.Fatalf("hwm = %d, want 8", l.HWM())
			}
			got := readAll(t, l, 0)
			want := append(append([]Record{}, keyed...), keyless...)
			if len(got) != len(want) {
				t.Fatalf("read %d records, want %d", len(got), len(want))
			}
			for i := range got {
				if got[i].Offset != uint64(i) || !bytes.Equal(got[i].Payload, want[i].Payload) || !bytes.Equal(got[i].Key, want[i].Key) {
					t.Fatalf("record %d = %+v, want payload %q key %q", i, got[i], want[i].Payload, want[i].Key)
				}
				if i >= 5 && got[i].Key != nil {
					t.Fatalf("keyless record %d came back with key %q", i, got[i].Key)
				}
			}
		})
	}
}

func TestMixedCodecsInOneSegment(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{Codec: CodecNone})
	commitT(t, l, recs("plain", 3, true))
	l.Close()
	l = openT(t, dir, Options{Codec: CodecZstd, Level: "better"})
	commitT(t, l, recs("zstd", 3, true))
	l.Close()
	l = openT(t, dir, Options{})
	defer l.Close()
	got := readAll(t, l, 0)
	if len(got) != 6 || string(got[0].Payload) != "plain-0" || string(got[5].Payload) != "zstd-2" {
		t.Fatalf("mixed codecs read back wrong: %d records", len(got))
	}
	if n := len(segmentFiles(t, dir)); n != 1 {
		t.Fatalf("%d segments, want 1", n)
	}
}

func TestCommitSetsOffsetsAndTimes(t *testing.T) {
	clk := clock.NewFake(time.UnixMilli(1_000_000))
	l := openT(t, t.TempDir(), Options{Now: clk.Now})
	defer l.Close()
	rs := recs("x", 3, false)
	commitT(t, l, rs)
	for i, r := range rs {
		if r.Offset != uint64(i) || r.CommittedAt != 1_000_000 {
			t.Fatalf("record %d stamped %d@%d", i, r.Offset, r.CommittedAt)
		}
	}
	if _, err := l.Commit(nil); !errors.Is(err, ErrEmptyBatch) {
		t.Fatalf("empty commit: %v", err)
	}
}

func TestSegmentsRollAtCap(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{SegmentBytes: 1024})
	for i := 0; i < 40; i++ {
		commitT(t, l, recs(fmt.Sprintf("b%d", i), 4, i%2 == 0))
	}
	files := segmentFiles(t, dir)
	if len(files) < 5 {
		t.Fatalf("%d segments after 40 commits of ~200 B at a 1 KiB cap", len(files))
	}
	for _, f := range files[:len(files)-1] {
		if fileSize(t, f) > 1024 {
			t.Fatalf("sealed segment %s is %d bytes, over the cap", f, fileSize(t, f))
		}
	}
	got := readAll(t, l, 0)
	if len(got) != 160 {
		t.Fatalf("read %d, want 160", len(got))
	}
	for i, r := range got {
		if r.Offset != uint64(i) {
			t.Fatalf("offset %d at index %d", r.Offset, i)
		}
	}
	// Reading from the middle of a middle segment finds the right frame.
	res, err := l.Read(77, 5, 1<<20, NoDueLimit)
	if err != nil || len(res.Records) != 5 || res.Records[0].Offset != 77 || res.Next != 82 {
		t.Fatalf("read from 77: %+v %v", res, err)
	}
	st := l.Stats()
	l.Close()
	l = openT(t, dir, Options{SegmentBytes: 1024})
	defer l.Close()
	if l.HWM() != 160 || len(readAll(t, l, 0)) != 160 {
		t.Fatalf("after reopen hwm %d", l.HWM())
	}
	if st2 := l.Stats(); st2.Segments != st.Segments || st2.SizeBytes != st.SizeBytes {
		t.Fatalf("stats changed across reopen: %+v vs %+v", st, st2)
	}
}

func TestCommitTimesNeverDecrease(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(time.UnixMilli(5_000_000))
	l := openT(t, dir, Options{Now: clk.Now})
	commitT(t, l, recs("a", 2, false))
	clk.Set(time.UnixMilli(4_000_000)) // the wall clock steps back
	rs := recs("b", 2, false)
	commitT(t, l, rs)
	if rs[0].CommittedAt != 5_000_000 {
		t.Fatalf("after a step back, stamped %d, want the floor 5000000", rs[0].CommittedAt)
	}
	l.Close()
	// Across a reopen the floor is recovered from the newest record.
	clk.Set(time.UnixMilli(3_000_000))
	l = openT(t, dir, Options{Now: clk.Now})
	rs = recs("c", 1, false)
	commitT(t, l, rs)
	if rs[0].CommittedAt != 5_000_000 {
		t.Fatalf("after reopen with clock behind, stamped %d, want 5000000", rs[0].CommittedAt)
	}
	clk.Set(time.UnixMilli(6_000_000))
	rs = recs("d", 1, false)
	commitT(t, l, rs)
	if rs[0].CommittedAt != 6_000_000 {
		t.Fatalf("clock forward: stamped %d", rs[0].CommittedAt)
	}
	all := readAll(t, l, 0)
	for i := 1; i < len(all); i++ {
		if all[i].CommittedAt < all[i-1].CommittedAt {
			t.Fatalf("commit time decreased at offset %d", i)
		}
	}
	l.Close()
}

func TestFloorRecoveredFromSealedSegmentWhenActiveEmpty(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(time.UnixMilli(9_000_000))
	l := openT(t, dir, Options{Now: clk.Now, SegmentBytes: 200})
	commitT(t, l, recs("a", 3, false))
	l.roll() // as if the process died right after rolling
	l.Close()
	clk.Set(time.UnixMilli(1_000))
	l = openT(t, dir, Options{Now: clk.Now, SegmentBytes: 200})
	defer l.Close()
	rs := recs("b", 1, false)
	commitT(t, l, rs)
	if rs[0].CommittedAt != 9_000_000 {
		t.Fatalf("floor from sealed segment not recovered: %d", rs[0].CommittedAt)
	}
}

func TestReadCaps(t *testing.T) {
	l := openT(t, t.TempDir(), Options{})
	defer l.Close()
	big := []Record{{Payload: bytes.Repeat([]byte("x"), 5000)}}
	commitT(t, l, big)
	commitT(t, l, recs("s", 10, false))
	res, err := l.Read(0, 100, 100, NoDueLimit)
	if err != nil || len(res.Records) != 1 || res.Next != 1 {
		t.Fatalf("an oversized first record must still be returned alone: %+v %v", res, err)
	}
	res, _ = l.Read(1, 4, 1<<20, NoDueLimit)
	if len(res.Records) != 4 || res.Next != 5 {
		t.Fatalf("maxRecords: %d records, next %d", len(res.Records), res.Next)
	}
	res, _ = l.Read(1, 100, 9, NoDueLimit) // each payload "s-N" is 3 bytes
	if len(res.Records) != 3 {
		t.Fatalf("maxBytes 9: %d records, want 3", len(res.Records))
	}
	res, _ = l.Read(11, 100, 100, NoDueLimit)
	if len(res.Records) != 0 || res.Next != 11 {
		t.Fatalf("read at hwm: %+v", res)
	}
}

func TestReadStopsAtFirstNotDue(t *testing.T) {
	clk := clock.NewFake(time.UnixMilli(1000))
	l := openT(t, t.TempDir(), Options{Now: clk.Now})
	defer l.Close()
	for _, at := range []int64{1000, 2000, 3000} {
		clk.Set(time.UnixMilli(at))
		commitT(t, l, recs("r", 2, false))
	}
	cases := []struct {
		maxAt    int64
		n        int
		notDueAt int64
	}{
		{999, 0, 1000},
		{1000, 2, 2000},
		{2500, 4, 3000},
		{3000, 6, 0},
		{NoDueLimit, 6, 0},
	}
	for _, c := range cases {
		res, err := l.Read(0, 100, 1<<20, c.maxAt)
		if err != nil || len(res.Records) != c.n || res.NotDueAt != c.notDueAt {
			t.Errorf("maxCommittedAt %d: %d records, notDueAt %d (want %d, %d), err %v",
				c.maxAt, len(res.Records), res.NotDueAt, c.n, c.notDueAt, err)
		}
	}
}

func TestNotifyWakesWaiters(t *testing.T) {
	l := openT(t, t.TempDir(), Options{})
	defer l.Close()
	ch := l.Notify()
	done := make(chan uint64)
	go func() {
		<-ch
		done <- l.HWM()
	}()
	commitT(t, l, recs("n", 1, false))
	select {
	case hwm := <-done:
		if hwm != 1 {
			t.Fatalf("woken with hwm %d", hwm)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not woken by commit")
	}
	ch = l.Notify()
	l.Wake()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not woken by Wake")
	}
}

func TestClosedLogRefuses(t *testing.T) {
	l := openT(t, t.TempDir(), Options{})
	ch := l.Notify()
	l.Close()
	if _, err := l.Commit(recs("x", 1, false)); !errors.Is(err, ErrClosed) {
		t.Fatalf("commit after close: %v", err)
	}
	if _, err := l.Read(0, 1, 1, NoDueLimit); !errors.Is(err, ErrClosed) {
		t.Fatalf("read after close: %v", err)
	}
	select {
	case <-ch:
	default:
		t.Fatal("close did not wake parked readers")
	}
}

func TestConcurrentCommitsAndReaders(t *testing.T) {
	l := openT(t, t.TempDir(), Options{SegmentBytes: 4096})
	defer l.Close()
	const writers, batches, per = 4, 50, 3
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for b := 0; b < batches; b++ {
				commitT(t, l, recs(fmt.Sprintf("w%d-b%d", w, b), per, true))
			}
		}(w)
	}
	stop := make(chan struct{})
	var rg sync.WaitGroup
	for r := 0; r < 2; r++ {
		rg.Add(1)
		go func() {
			defer rg.Done()
			next := uint64(0)
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := l.Read(next, 50, 1<<20, NoDueLimit)
				if err != nil {
					t.Errorf("read: %v", err)
					return
				}
				for _, r := range res.Records {
					if r.Offset != next {
						t.Errorf("reader saw offset %d, expected %d", r.Offset, next)
						return
					}
					next++
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	rg.Wait()
	all := readAll(t, l, 0)
	if len(all) != writers*batches*per {
		t.Fatalf("%d records, want %d", len(all), writers*batches*per)
	}
	// Each batch is contiguous: all or nothing, never interleaved.
	for i := 0; i < len(all); i += per {
		p := string(all[i].Payload)
		prefix := p[:len(p)-2]
		for j := 0; j < per; j++ {
			if want := fmt.Sprintf("%s-%d", prefix, j); string(all[i+j].Payload) != want {
				t.Fatalf("batch interleaved at %d: %q, want %q", i+j, all[i+j].Payload, want)
			}
		}
	}
}

func TestOffsetFile(t *testing.T) {
	path := t.TempDir() + "/" + ConsumerOffsetFile
	if _, ok, err := ReadOffsetFile(path); ok || err != nil {
		t.Fatalf("missing file: ok=%v err=%v", ok, err)
	}
	for _, v := range []uint64{0, 1, 1 << 40, ^uint64(0)} {
		if err := WriteOffsetFile(path, v); err != nil {
			t.Fatal(err)
		}
		got, ok, err := ReadOffsetFile(path)
		if !ok || err != nil || got != v {
			t.Fatalf("round trip %d: %d %v %v", v, got, ok, err)
		}
	}
	if fileSize(t, path) != 8 {
		t.Fatalf("offset file is %d bytes", fileSize(t, path))
	}
}
