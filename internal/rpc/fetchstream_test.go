package rpc

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/refusal"
)

// streamsSeen is a fetch handler that notes, per partition, the context
// each fetch was served under: fetches on one stream share it.
type streamsSeen struct {
	mu   sync.Mutex
	ctxs map[int][]context.Context
	// block, when set, parks the fetches of that partition until their
	// context ends.
	block int
}

func (s *streamsSeen) fetch(ctx context.Context, req FetchRequest) (FetchResponse, error) {
	s.mu.Lock()
	if s.ctxs == nil {
		s.ctxs = map[int][]context.Context{}
	}
	s.ctxs[req.Partition] = append(s.ctxs[req.Partition], ctx)
	block := s.block
	s.mu.Unlock()
	if req.Partition == block {
		<-ctx.Done()
		return FetchResponse{}, ctx.Err()
	}
	if req.Offset == 99 {
		return FetchResponse{}, refusal.New(refusal.ErrStaleEpoch, 0, "stale")
	}
	return FetchResponse{Epoch: req.Epoch, Committed: req.Offset}, nil
}

func (s *streamsSeen) of(p int) []context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]context.Context(nil), s.ctxs[p]...)
}

// beforeFramed serves as a release before framed connections: fetches
// to it ride gRPC streams (these tests' subject).
var beforeFramed = WithoutFramed()

// A follower's fetches for one partition ride one stream, a refusal
// included (it is an answer, not the stream's end); another partition
// gets a stream of its own.
func TestFetchesShareAStreamPerPartition(t *testing.T) {
	seen := &streamsSeen{block: -1}
	addr, _ := startServer(t, &fake{fetch: seen.fetch}, beforeFramed)
	p := testPool(t, testSecret)
	ctx := context.Background()
	for _, off := range []uint64{1, 99, 2, 3} {
		resp, err := p.Fetch(ctx, addr, FetchRequest{Topic: "orders", Partition: 1, Follower: "n2", Epoch: 4, Offset: off})
		if off == 99 {
			if !errors.Is(err, refusal.ErrStaleEpoch) {
				t.Fatalf("refused fetch: %v, want a stale epoch", err)
			}
			continue
		}
		if err != nil || resp.Committed != off || resp.Epoch != 4 {
			t.Fatalf("fetch from %d: %+v, %v", off, resp, err)
		}
	}
	if _, err := p.Fetch(ctx, addr, FetchRequest{Topic: "orders", Partition: 2, Follower: "n2"}); err != nil {
		t.Fatal(err)
	}
	one := seen.of(1)
	if len(one) != 4 {
		t.Fatalf("partition 1 served %d fetches, want 4", len(one))
	}
	for i, c := range one[1:] {
		if c != one[0] {
			t.Errorf("fetch %d of partition 1 came on another stream", i+2)
		}
	}
	if two := seen.of(2); len(two) != 1 || two[0] == one[0] {
		t.Errorf("partition 2's fetch shared partition 1's stream")
	}
}

// A fetch whose caller gives up closes its stream, as a call's
// cancellation ends the call: the leader's long-poll ends, the follower
// hears the same 503 a call gives, and its next fetch opens a new stream.
func TestFetchStreamClosedWithItsFetch(t *testing.T) {
	seen := &streamsSeen{block: 1}
	addr, _ := startServer(t, &fake{fetch: seen.fetch}, beforeFramed)
	p := testPool(t, testSecret)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := p.Fetch(ctx, addr, FetchRequest{Topic: "orders", Partition: 1, Follower: "n2", Wait: time.Minute})
	if ae := asAPIErr(t, err); ae.Status != http.StatusServiceUnavailable {
		t.Fatalf("abandoned fetch: %v, want a 503", err)
	}
	first := seen.of(1)[0]
	select {
	case <-first.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the leader's side of an abandoned fetch's stream did not end")
	}
	seen.mu.Lock()
	seen.block = -1
	seen.mu.Unlock()
	if _, err := p.Fetch(context.Background(), addr, FetchRequest{Topic: "orders", Partition: 1, Follower: "n2"}); err != nil {
		t.Fatal(err)
	}
	if again := seen.of(1); len(again) != 2 || again[1] == first {
		t.Fatal("the fetch after an abandoned one reused its closed stream")
	}
}

// A node of a release before FetchStream answers it Unimplemented; the
// follower then fetches from it by calls, which it serves.
func TestFetchFromANodeWithoutStreams(t *testing.T) {
	seen := &streamsSeen{block: -1}
	addr, _ := startServer(t, &fake{fetch: seen.fetch}, beforeFramed, func(s *Server) { s.callsOnly = true })
	p := testPool(t, testSecret)
	for off := range uint64(3) {
		resp, err := p.Fetch(context.Background(), addr, FetchRequest{Topic: "orders", Partition: 1, Follower: "n2", Offset: off})
		if err != nil || resp.Committed != off {
			t.Fatalf("fetch %d from a node without streams: %+v, %v", off, resp, err)
		}
	}
	if n := len(seen.of(1)); n != 3 {
		t.Fatalf("served %d fetches, want 3", n)
	}
	if _, old := p.streams.take(streamKey{addr: addr}, time.Now()); !old {
		t.Error("the node without streams is not remembered as such")
	}
}

// Closing the pool closes its idle streams: the leader's side of each
// ends.
func TestPoolCloseClosesFetchStreams(t *testing.T) {
	seen := &streamsSeen{block: -1}
	addr, _ := startServer(t, &fake{fetch: seen.fetch}, beforeFramed)
	p := NewPool(testSecret)
	if _, err := p.Fetch(context.Background(), addr, FetchRequest{Topic: "orders", Partition: 1, Follower: "n2"}); err != nil {
		t.Fatal(err)
	}
	p.Close()
	select {
	case <-seen.of(1)[0].Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a closed pool's fetch stream is still open on the leader")
	}
}

// A streamed fetch that gets no answer within its budget (its long-poll
// wait plus the default timeout) fails as a call would, 503, and its
// stream is closed: the leader's side ends.
func TestFetchStreamBudget(t *testing.T) {
	seen := &streamsSeen{block: 1}
	addr, _ := startServer(t, &fake{fetch: seen.fetch}, beforeFramed)
	p := testPool(t, testSecret)
	start := time.Now()
	_, err := p.Fetch(context.Background(), addr, FetchRequest{Topic: "orders", Partition: 1, Follower: "n2", Wait: time.Millisecond})
	if ae := asAPIErr(t, err); ae.Status != http.StatusServiceUnavailable {
		t.Fatalf("fetch past its budget: %v, want a 503", err)
	}
	if took := time.Since(start); took < DefaultTimeout {
		t.Errorf("the fetch failed after %v, before its budget", took)
	}
	select {
	case <-seen.of(1)[0].Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the leader's side of a fetch past its budget did not end")
	}
}

// Streams idle past streamIdle are closed at the next look, and no
// sooner than streamIdle after the last one.
func TestIdleFetchStreamsClosed(t *testing.T) {
	var fs fetchStreams
	closed := map[string]bool{}
	stream := func(name string) *fetchStream {
		return &fetchStream{close: func() { closed[name] = true }}
	}
	t0 := time.Unix(1_000_000, 0)
	fs.take(streamKey{addr: "x"}, t0) // the first look
	fs.put(streamKey{addr: "a"}, stream("a"), t0)
	fs.put(streamKey{addr: "b"}, stream("b"), t0.Add(streamIdle/2))
	fs.take(streamKey{addr: "x"}, t0.Add(streamIdle/2))
	if closed["a"] || closed["b"] {
		t.Fatalf("closed %v before any stream was idle for streamIdle", closed)
	}
	fs.take(streamKey{addr: "x"}, t0.Add(streamIdle))
	if !closed["a"] || closed["b"] {
		t.Fatalf("closed %v; want a (idle for streamIdle) only", closed)
	}
}
