package rpc

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	nodepb "github.com/narad-io/narad/internal/rpc/proto"
)

// A follower's fetches to one leader ride one long-lived FetchStream per
// partition instead of one call each: a fetch is then a message each way,
// without a call's headers, trailers and new HTTP/2 stream, which made
// up much of a replicating node's CPU (docs/replication-performance.md,
// "What bounds the single-record figure"). The answers are the calls'
// own: the same conversions, the same refusals (a FetchAnswer's error is
// the detail a call's status carries), the same budget per fetch, the
// same "unreachable" when it runs out.
//
// A stream carries one fetch at a time; the follower's loop sends the
// next only after the answer. A stream that failed in any way, or whose
// fetch ran out of budget or was cancelled, is closed and never reused:
// the next fetch opens another. A node that does not know FetchStream
// (an older release, during a rolling upgrade) is fetched from by calls,
// asked again after streamRetryOld.

const (
	// streamIdle closes a stream no fetch used for this long: the
	// partition is no longer followed, or its leader moved.
	streamIdle = 2 * time.Minute
	// streamRetryOld is how long a node that answered FetchStream
	// Unimplemented is fetched from by calls before streams are tried
	// again (it may have been upgraded).
	streamRetryOld = time.Minute
)

// streamKey names one follower's stream: to a node, for a partition.
type streamKey struct {
	addr, topic string
	incarnation uint64
	partition   int
	follower    string
}

// fetchStream is an open stream and how to close it.
type fetchStream struct {
	s      grpc.BidiStreamingClient[nodepb.FetchRequest, nodepb.FetchAnswer]
	close  context.CancelFunc
	usedAt time.Time
}

// fetchStreams are a pool's idle streams (a stream in use is taken out
// of the map, so no two fetches share one) and the nodes without them.
type fetchStreams struct {
	mu      sync.Mutex
	idle    map[streamKey]*fetchStream
	oldAt   map[string]time.Time // addr → when it answered Unimplemented
	sweptAt time.Time            // the last look for streams idle too long
	closed  bool
}

// take removes and returns k's idle stream, nil when k has none, and
// (at most once per streamIdle, not on every fetch) closes the streams
// idle past streamIdle. old reports that addr is fetched from by calls
// for now.
func (fs *fetchStreams) take(k streamKey, now time.Time) (st *fetchStream, old bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if at, ok := fs.oldAt[k.addr]; ok {
		if now.Sub(at) < streamRetryOld {
			return nil, true
		}
		delete(fs.oldAt, k.addr)
	}
	if fs.closed {
		return nil, true
	}
	if now.Sub(fs.sweptAt) >= streamIdle {
		fs.sweptAt = now
		for key, s := range fs.idle {
			if now.Sub(s.usedAt) >= streamIdle {
				s.close()
				delete(fs.idle, key)
			}
		}
	}
	st = fs.idle[k]
	delete(fs.idle, k)
	return st, false
}

// put returns a stream that answered its fetch whole; after closeAll it
// is closed instead.
func (fs *fetchStreams) put(k streamKey, st *fetchStream, now time.Time) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.closed {
		st.close()
		return
	}
	if fs.idle == nil {
		fs.idle = map[streamKey]*fetchStream{}
	}
	if prev := fs.idle[k]; prev != nil {
		prev.close()
	}
	st.usedAt = now
	fs.idle[k] = st
}

// markOld records that addr does not know FetchStream.
func (fs *fetchStreams) markOld(addr string, now time.Time) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.oldAt == nil {
		fs.oldAt = map[string]time.Time{}
	}
	fs.oldAt[addr] = now
}

// closeAll closes every idle stream; later ones are closed when put.
func (fs *fetchStreams) closeAll() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.closed = true
	for k, s := range fs.idle {
		s.close()
		delete(fs.idle, k)
	}
}

// fetchStreamed sends req on the follower's stream to addr. ok is false
// when the fetch should go as a call instead (addr has no streams), and
// nothing was sent.
func (p *Pool) fetchStreamed(ctx context.Context, addr string, req FetchRequest) (resp FetchResponse, err error, ok bool) {
	k := streamKey{addr: addr, topic: req.Topic, incarnation: req.Incarnation, partition: req.Partition, follower: req.Follower}
	st, old := p.streams.take(k, time.Now())
	if old {
		return FetchResponse{}, nil, false
	}
	fresh := st == nil
	if fresh {
		if st, err = p.openFetchStream(addr); err != nil {
			return FetchResponse{}, err, true
		}
	}
	// The budget and the caller's context end the fetch as they end a
	// call: by closing the stream, which fails Recv.
	budget := time.AfterFunc(fetchBudget(req), st.close)
	stopCtx := context.AfterFunc(ctx, st.close)
	ans, err := roundTrip(st, fetchToPB(req))
	ranOut := !budget.Stop()
	cancelled := !stopCtx()
	if err == nil && (ranOut || cancelled) {
		// Answered, but the stream was closed as the answer came: the
		// answer stands, the stream is not reused.
		return p.fetchAnswered(ans)
	}
	if err != nil {
		st.close()
		if fresh && status.Code(err) == codes.Unimplemented {
			p.streams.markOld(addr, time.Now())
			return FetchResponse{}, nil, false
		}
		switch {
		case cancelled && ctx.Err() != nil:
			err = status.FromContextError(ctx.Err()).Err()
		case ranOut:
			err = status.Error(codes.DeadlineExceeded, "fetch stream: no answer within the fetch's budget")
		}
		return FetchResponse{}, decodeError(addr, "FetchStream", err), true
	}
	p.streams.put(k, st, time.Now())
	return p.fetchAnswered(ans)
}

// fetchAnswered reads a stream's answer as a call's.
func (p *Pool) fetchAnswered(ans *nodepb.FetchAnswer) (FetchResponse, error, bool) {
	if e := ans.GetError(); e != nil {
		return FetchResponse{}, fromDetail(e), true
	}
	resp, err := fetchResponseFromPB(ans.GetResponse())
	return resp, err, true
}

// roundTrip sends one fetch and reads its answer.
func roundTrip(st *fetchStream, in *nodepb.FetchRequest) (*nodepb.FetchAnswer, error) {
	if err := st.s.Send(in); err != nil {
		// Send reports io.EOF when the stream ended; Recv says why.
		if _, rerr := st.s.Recv(); rerr != nil {
			return nil, rerr
		}
		return nil, err
	}
	return st.s.Recv()
}

// openFetchStream opens a stream to addr that lives until closed, not
// for one fetch's context.
func (p *Pool) openFetchStream(addr string) (*fetchStream, error) {
	cc, err := p.conn(addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := nodepb.NewNodeClient(cc).FetchStream(ctx)
	if err != nil {
		cancel()
		return nil, decodeError(addr, "FetchStream", err)
	}
	return &fetchStream{s: s, close: cancel}, nil
}

// FetchStream serves a follower's stream: each fetch received is served
// as a Fetch call is, and answered, in order, until the follower closes
// the stream. A refusal is the answer's error, not the stream's end.
func (s *service) FetchStream(ss grpc.BidiStreamingServer[nodepb.FetchRequest, nodepb.FetchAnswer]) error {
	for {
		req, err := ss.Recv()
		if err != nil {
			if err == io.EOF || status.Code(err) == codes.Canceled || errors.Is(err, context.Canceled) {
				return nil // the follower closed it
			}
			return err
		}
		ans := &nodepb.FetchAnswer{}
		if ans.Response, err = s.fetch(ss.Context(), req); err != nil {
			s.failed("FetchStream", err)
			ans.Response, ans.Error = nil, errorDetail(err)
		}
		if err := ss.Send(ans); err != nil {
			return err
		}
	}
}

// callsOnlyService is the service as a release before FetchStream serves
// it: the stream is unknown there (Server.callsOnly, for tests).
type callsOnlyService struct{ *service }

func (callsOnlyService) FetchStream(grpc.BidiStreamingServer[nodepb.FetchRequest, nodepb.FetchAnswer]) error {
	return status.Error(codes.Unimplemented, "unknown method FetchStream")
}
