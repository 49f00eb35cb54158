package wal

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/testutil"
)

func TestAppendAssignsContiguousSeqsUnderConcurrency(t *testing.T) {
	w := openT(t, t.TempDir(), Options{})
	const goroutines, perG, batch = 8, 50, 3
	var mu sync.Mutex
	seen := map[uint64]Record{}
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for i := range perG {
				recs := []Record{testRecord(g*1000 + i), testRecord(g*1000 + i + 500), testRecord(g)}
				if err := w.Append(context.Background(), recs[:1+i%batch]); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				for k, r := range recs[:1+i%batch] {
					// One Append's records get consecutive seqs.
					if r.Seq != recs[0].Seq+uint64(k) {
						errs <- errors.New("seqs within one Append are not consecutive")
					}
					seen[r.Seq] = r
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	last := w.LastSeq()
	if int(last) != len(seen) {
		t.Fatalf("LastSeq %d, but %d distinct seqs acknowledged", last, len(seen))
	}
	got := readAll(t, w, 1)
	if len(got) != len(seen) {
		t.Fatalf("read %d records, %d acknowledged", len(got), len(seen))
	}
	for i, r := range got {
		want, ok := seen[uint64(i+1)]
		if !ok || r.Seq != uint64(i+1) || !sameRecord(r, want) {
			t.Fatalf("record %d = %+v, want %+v (acked %v)", i, r, want, ok)
		}
	}
}

func TestSeqContiguousAcrossReopen(t *testing.T) {
	cases := []struct {
		name        string
		opts        Options
		checkpoints []uint64 // SetCheckpoint after each round, 0 = none
	}{
		{"plain reopen", Options{}, []uint64{0, 0, 0}},
		{"small segments", Options{SegmentBytes: 512}, []uint64{0, 0, 0}},
		{"checkpointed and rotated", Options{SegmentBytes: 512, RotateDispatchedBytes: 256}, []uint64{11, 21, 31}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			n := 0
			for round, ck := range tc.checkpoints {
				w, err := Open(dir, tc.opts)
				if err != nil {
					t.Fatalf("round %d: Open: %v", round, err)
				}
				if w.LastSeq() != uint64(n) {
					t.Fatalf("round %d: LastSeq %d after reopen, want %d", round, w.LastSeq(), n)
				}
				appendRange(t, w, n, n+10, 3)
				n += 10
				if ck != 0 {
					if err := w.SetCheckpoint(ck); err != nil {
						t.Fatalf("round %d: SetCheckpoint(%d): %v", round, ck, err)
					}
				}
				if err := w.Close(); err != nil {
					t.Fatalf("round %d: Close: %v", round, err)
				}
			}
			w := openT(t, dir, tc.opts)
			from := w.Checkpoint()
			checkRecords(t, readAll(t, w, from), from, uint64(n))
		})
	}
}

func TestAppendCancelledBeforeStaging(t *testing.T) {
	w := openT(t, t.TempDir(), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	recs := []Record{testRecord(0)}
	mustErrIs(t, w.Append(ctx, recs), context.Canceled)
	if w.LastSeq() != 0 || recs[0].Seq != 0 {
		t.Fatalf("cancelled append staged: LastSeq %d, seq %d", w.LastSeq(), recs[0].Seq)
	}
	appendRange(t, w, 0, 1, 1)
	checkRecords(t, readAll(t, w, 1), 1, 1)
}

// Once staged, an Append reports what happened on disk, not its context.
func TestAppendCancelledAfterStagingReportsTrueResult(t *testing.T) {
	injected := errors.New("injected sync failure")
	cases := []struct {
		name     string
		syncErr  error
		wantLast uint64
	}{
		{"sync succeeds", nil, 1},
		{"sync fails", injected, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newGate()
			w := openHooked(t, t.TempDir(), Options{}, testHooks{beforeWrite: g.hook})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- w.Append(ctx, []Record{testRecord(0)}) }()
			recv(t, "syncer to take the batch", g.entered) // staged and taken
			cancel()
			g.release <- tc.syncErr
			err := recv(t, "Append to return", done)
			if tc.syncErr == nil && err != nil {
				t.Fatalf("Append = %v, want nil: the record is durable", err)
			}
			if tc.syncErr != nil {
				mustErrIs(t, err, injected)
				mustErrIs(t, err, ErrFailed)
			}
			if errors.Is(err, context.Canceled) {
				t.Fatalf("Append reported its context (%v) instead of the sync result", err)
			}
			if w.LastSeq() != tc.wantLast {
				t.Fatalf("LastSeq %d, want %d", w.LastSeq(), tc.wantLast)
			}
		})
	}
}

// A write error that is not a full disk leaves the file's state in doubt:
// the WAL is fenced, refuses appends, and heals without a reopen.
func TestWriteErrorFencesUntilHealed(t *testing.T) {
	dir := t.TempDir()
	injected := errors.New("EIO")
	var mu sync.Mutex
	failNext := false
	w, err := open(dir, Options{HealInterval: time.Millisecond}, testHooks{beforeWrite: func() error {
		mu.Lock()
		defer mu.Unlock()
		if failNext {
			return injected
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	appendRange(t, w, 0, 5, 1)
	mu.Lock()
	failNext = true
	mu.Unlock()
	err = w.Append(context.Background(), []Record{testRecord(5)})
	mustErrIs(t, err, injected)
	mustErrIs(t, err, ErrFenced)
	mu.Lock()
	failNext = false
	mu.Unlock()
	testutil.WaitFor(t, "the fence to lift", func() bool { return w.Health() == nil })
	appendRange(t, w, 5, 6, 1)
	checkRecords(t, readAll(t, w, 1), 1, 6)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w2 := openT(t, dir, Options{})
	checkRecords(t, readAll(t, w2, 1), 1, 6)
}

func TestClosedWALRejectsCleanly(t *testing.T) {
	w, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	appendRange(t, w, 0, 3, 1)
	notify := w.Notify()
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	mustErrIs(t, w.Append(context.Background(), []Record{testRecord(3)}), ErrClosed)
	_, err = w.Read(1, 10, 0)
	mustErrIs(t, err, ErrClosed)
	mustErrIs(t, w.SetCheckpoint(2), ErrClosed)
	recv(t, "Notify channel closed by Close", notify)
	recv(t, "Notify after Close", w.Notify())
	if w.LastSeq() != 3 {
		t.Fatalf("LastSeq after Close %d, want 3", w.LastSeq())
	}
}

// Appends staged when Close is called are flushed and get their real result.
func TestCloseFlushesStagedAppends(t *testing.T) {
	dir := t.TempDir()
	g := newGate()
	w, err := open(dir, Options{}, testHooks{beforeWrite: g.hook})
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	go func() { first <- w.Append(context.Background(), []Record{testRecord(0)}) }()
	recv(t, "first batch taken", g.entered)
	second := make(chan error, 1)
	go func() { second <- w.Append(context.Background(), []Record{testRecord(1)}) }()
	testutil.WaitFor(t, "second append staged", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.cur.appends == 1
	})
	closed := make(chan error, 1)
	go func() { closed <- w.Close() }()
	testutil.WaitFor(t, "Close to start", w.isClosed)
	mustErrIs(t, w.Append(context.Background(), []Record{testRecord(2)}), ErrClosed)
	g.release <- nil
	recv(t, "second batch taken", g.entered)
	g.release <- nil
	for name, ch := range map[string]chan error{"first": first, "second": second, "Close": closed} {
		if err := recv(t, name, ch); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	w2 := openT(t, dir, Options{})
	checkRecords(t, readAll(t, w2, 1), 1, 2)
}

func TestOversizeRecordRefusedWithoutStaging(t *testing.T) {
	w := openT(t, t.TempDir(), Options{})
	big := Record{Topic: "t", Payload: make([]byte, MaxRecordBytes)}
	cases := []struct {
		name string
		recs []Record
	}{
		{"alone", []Record{big}},
		{"after good records in one batch", []Record{testRecord(0), testRecord(1), big}},
		{"topic too long", []Record{{Topic: strings.Repeat("t", MaxTopicBytes+1)}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := w.Append(context.Background(), tc.recs)
			mustErrIs(t, err, ErrRecordTooLarge)
			if w.LastSeq() != 0 || tc.recs[0].Seq != 0 {
				t.Fatalf("refused batch was partly staged: LastSeq %d", w.LastSeq())
			}
		})
	}
	appendRange(t, w, 0, 1, 1)
	checkRecords(t, readAll(t, w, 1), 1, 1)
}

// The backstop alone must drive the syncer when wake-ups are lost.
func TestBackstopBoundsMissedWakeup(t *testing.T) {
	w := openHooked(t, t.TempDir(), Options{SyncBackstop: 5 * time.Millisecond}, testHooks{dropWakes: true})
	done := make(chan error, 1)
	go func() {
		for i := range 3 {
			if err := w.Append(context.Background(), []Record{testRecord(i)}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	if err := recv(t, "appends without wake-ups", done); err != nil {
		t.Fatal(err)
	}
	checkRecords(t, readAll(t, w, 1), 1, 3)
}

func TestNothingVisibleBeforeDurable(t *testing.T) {
	g := newGate()
	w := openHooked(t, t.TempDir(), Options{}, testHooks{beforeWrite: g.hook})
	ch := w.Notify()
	done := make(chan error, 1)
	go func() { done <- w.Append(context.Background(), []Record{testRecord(0)}) }()
	recv(t, "batch taken", g.entered)
	select {
	case <-ch:
		t.Fatal("Notify fired before the batch was durable")
	case err := <-done:
		t.Fatalf("Append returned (%v) before its batch was durable", err)
	default:
	}
	if w.LastSeq() != 0 {
		t.Fatal("LastSeq advanced before the batch was durable")
	}
	if got, err := w.Read(1, 10, 0); err != nil || len(got) != 0 {
		t.Fatalf("Read returned %d records (%v) before the batch was durable", len(got), err)
	}
	g.release <- nil
	recv(t, "Notify after durable append", ch)
	if err := recv(t, "Append", done); err != nil {
		t.Fatal(err)
	}
	if w.LastSeq() != 1 {
		t.Fatalf("LastSeq %d after Notify, want 1", w.LastSeq())
	}
	if w.Notify() == ch {
		t.Fatal("Notify channel not replaced")
	}
}

// Past the staging bound an Append waits before staging, so its context
// still applies and a cancelled one leaves no trace.
func TestBackpressureHonoursContextBeforeStaging(t *testing.T) {
	g := newGate()
	w := openHooked(t, t.TempDir(), Options{}, testHooks{beforeWrite: g.hook})
	w.mu.Lock()
	w.stageLimit = 1 // any second append in a batch is over the bound
	w.mu.Unlock()
	first := make(chan error, 1)
	go func() { first <- w.Append(context.Background(), []Record{testRecord(0)}) }()
	recv(t, "first batch taken", g.entered)
	second := make(chan error, 1)
	go func() { second <- w.Append(context.Background(), []Record{testRecord(1)}) }()
	testutil.WaitFor(t, "second append staged", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.cur.appends == 1
	})
	ctx, cancel := context.WithCancel(context.Background())
	third := make(chan error, 1)
	recs := []Record{testRecord(99)}
	go func() { third <- w.Append(ctx, recs) }()
	testutil.WaitFor(t, "third append waiting on the bound", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.cur.taken != nil
	})
	cancel()
	mustErrIs(t, recv(t, "third append", third), context.Canceled)
	g.release <- nil
	recv(t, "second batch taken", g.entered)
	g.release <- nil
	for _, ch := range []chan error{first, second} {
		if err := recv(t, "append", ch); err != nil {
			t.Fatal(err)
		}
	}
	checkRecords(t, readAll(t, w, 1), 1, 2)
}

func TestSecondOpenOfSameDirRefused(t *testing.T) {
	dir := t.TempDir()
	w := openT(t, dir, Options{})
	if w2, err := Open(dir, Options{}); err == nil {
		w2.Close()
		t.Fatal("second Open of a directory in use succeeded")
	}
	w.Close()
	openT(t, dir, Options{})
}

func TestOptionsValidated(t *testing.T) {
	for _, o := range []Options{{SegmentBytes: -1}, {RotateDispatchedBytes: -1}, {SyncBackstop: -1}, {GatherWait: -1}} {
		if w, err := Open(t.TempDir(), o); err == nil {
			w.Close()
			t.Fatalf("Open accepted %+v", o)
		}
	}
	w := openT(t, t.TempDir(), Options{})
	want := Options{SegmentBytes: DefaultSegmentBytes, RotateDispatchedBytes: DefaultRotateDispatchedBytes, SyncBackstop: DefaultSyncBackstop, HealInterval: DefaultHealInterval, GatherWait: DefaultGatherWait}
	if w.opts != want {
		t.Fatalf("defaults %+v, want %+v", w.opts, want)
	}
}

func TestSizeBytesTracksSegments(t *testing.T) {
	dir := t.TempDir()
	w := openT(t, dir, Options{SegmentBytes: 1024})
	appendRange(t, w, 0, 60, 2)
	onDisk := func() (total int64, files []string) {
		files = segmentFiles(t, dir)
		for _, f := range files {
			total += fileSize(t, filepath.Join(dir, f))
		}
		return total, files
	}
	total, before := onDisk()
	if len(before) < 3 || w.SizeBytes() != total {
		t.Fatalf("SizeBytes %d, segments %v total %d bytes", w.SizeBytes(), before, total)
	}
	if err := w.SetCheckpoint(50); err != nil {
		t.Fatal(err)
	}
	total, after := onDisk()
	if len(after) >= len(before) || w.SizeBytes() != total {
		t.Fatalf("after checkpoint SizeBytes %d, segments %v total %d bytes", w.SizeBytes(), after, total)
	}
}
