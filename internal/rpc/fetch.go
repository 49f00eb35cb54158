package rpc

import (
	"context"
	"net/http"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/storage"

	nodepb "github.com/narad-io/narad/internal/rpc/proto"
)

// Fetch is the replication call of a replicated partition
// (docs/replication.md): a follower asks its leader for the records from its
// durable end. These types are package replica's FetchRequest and
// FetchResponse field for field (the server package converts them, which
// stops compiling if the two drift apart), declared here so node RPC needs
// nothing of the replication engine or the metastore.

// FetchRequest is a follower's fetch (replica.FetchRequest).
type FetchRequest struct {
	Topic       string
	Incarnation uint64
	Partition   int
	Epoch       uint64
	Follower    string
	DiskID      string
	Offset      uint64
	MaxBytes    int
	Wait        time.Duration
	// StateVersion echoes the side state last applied (0: none).
	StateVersion uint64
	// Frames: the follower takes the leader's frames as stored.
	Frames bool
}

// FetchResponse is the leader's answer (replica.FetchResponse): records
// with their offsets and commit times, or the frames holding them as the
// leader's log stores them, its committed point and consumer frontier,
// and its side state (delivery counts and fan-out cursors) when it
// changed since the version the fetch echoed.
type FetchResponse struct {
	Epoch        uint64
	Committed    uint64
	Records      []storage.Record
	Frames       []byte
	Frontier     uint64
	StateVersion uint64
	Counts       []storage.CountEntry
	Cursors      []FollowedCursor
}

// FollowedCursor is one fan-out cursor file a follower keeps for a
// takeover (replica.CursorPosition: the same unnamed struct, so the two
// convert).
type FollowedCursor = struct {
	Child      string
	Epoch      string
	NextOffset uint64
}

// Fetch asks the leader at addr for records on a framed connection
// (framed.go); to a node of a release before them, over the follower's
// fetch stream to addr when that node has one (fetchstream.go), else as a
// call. Every way the budget is the long-poll wait plus the default
// timeout, so a leader that parks the fetch for its whole wait still
// answers in time.
func (p *Pool) Fetch(ctx context.Context, addr string, req FetchRequest) (FetchResponse, error) {
	out := &nodepb.FetchResponse{}
	if err, ok := p.callFramed(ctx, addr, "Fetch", opFetch, fetchBudget(req), fetchToPB(req), out); ok {
		if err != nil {
			return FetchResponse{}, err
		}
		return fetchResponseFromPB(out)
	}
	if resp, err, ok := p.fetchStreamed(ctx, addr, req); ok {
		return resp, err
	}
	return p.fetchCall(ctx, addr, req)
}

// fetchCall is a fetch as one unary call.
func (p *Pool) fetchCall(ctx context.Context, addr string, req FetchRequest) (FetchResponse, error) {
	in := fetchToPB(req)
	out, err := invoke(ctx, p, addr, "Fetch", fetchBudget(req), func(ctx context.Context, c nodepb.NodeClient) (*nodepb.FetchResponse, error) {
		return c.Fetch(ctx, in)
	})
	if err != nil {
		return FetchResponse{}, err
	}
	return fetchResponseFromPB(out)
}

// fetchBudget bounds one fetch: its long-poll wait plus the default
// timeout.
func fetchBudget(req FetchRequest) time.Duration { return max(req.Wait, 0) + DefaultTimeout }

func fetchToPB(req FetchRequest) *nodepb.FetchRequest {
	return &nodepb.FetchRequest{Topic: req.Topic, Incarnation: req.Incarnation, Partition: int32(req.Partition),
		Epoch: req.Epoch, Follower: req.Follower, DiskId: req.DiskID, Offset: req.Offset, MaxBytes: int64(req.MaxBytes), WaitMs: toMillis(req.Wait),
		StateVersion: req.StateVersion, Frames: req.Frames}
}

func fetchResponseFromPB(out *nodepb.FetchResponse) (FetchResponse, error) {
	recs, err := storedFromPB(out.GetRecords())
	if err != nil {
		return FetchResponse{}, err
	}
	resp := FetchResponse{Epoch: out.GetEpoch(), Committed: out.GetCommitted(), Records: recs, Frames: out.GetFrames(),
		Frontier: out.GetFrontier(), StateVersion: out.GetStateVersion()}
	if resp.StateVersion != 0 {
		resp.Counts = make([]storage.CountEntry, len(out.GetCounts()))
		for i, c := range out.GetCounts() {
			resp.Counts[i] = storage.CountEntry{Offset: c.GetOffset(), Count: c.GetCount()}
		}
		resp.Cursors = make([]FollowedCursor, len(out.GetCursors()))
		for i, c := range out.GetCursors() {
			resp.Cursors[i] = FollowedCursor{Child: c.GetChild(), Epoch: c.GetEpoch(), NextOffset: c.GetNextOffset()}
		}
	}
	return resp, nil
}

func (s *service) Fetch(ctx context.Context, req *nodepb.FetchRequest) (*nodepb.FetchResponse, error) {
	return s.fetch(ctx, req)
}

// fetch serves one fetch, called or streamed: the request checked, the
// handler's answer converted.
func (s *service) fetch(ctx context.Context, req *nodepb.FetchRequest) (*nodepb.FetchResponse, error) {
	if req.GetMaxBytes() < 0 || req.GetWaitMs() < 0 || req.GetPartition() < 0 {
		return nil, apierr.BadRequest("fetch: partition %d max_bytes %d wait_ms %d out of range", req.GetPartition(), req.GetMaxBytes(), req.GetWaitMs())
	}
	resp, err := s.h.Fetch(ctx, FetchRequest{Topic: req.GetTopic(), Incarnation: req.GetIncarnation(), Partition: int(req.GetPartition()),
		Epoch: req.GetEpoch(), Follower: req.GetFollower(), DiskID: req.GetDiskId(), Offset: req.GetOffset(), MaxBytes: int(min(req.GetMaxBytes(), MaxMessageBytes)),
		Wait: fromMillis(req.GetWaitMs()), StateVersion: req.GetStateVersion(), Frames: req.GetFrames()})
	if err != nil {
		return nil, err
	}
	out := &nodepb.FetchResponse{Epoch: resp.Epoch, Committed: resp.Committed, Records: storedToPB(resp.Records), Frames: resp.Frames,
		Frontier: resp.Frontier, StateVersion: resp.StateVersion}
	if resp.StateVersion != 0 {
		out.Counts = make([]*nodepb.DeliveryCount, len(resp.Counts))
		for i, c := range resp.Counts {
			out.Counts[i] = &nodepb.DeliveryCount{Offset: c.Offset, Count: c.Count}
		}
		out.Cursors = make([]*nodepb.FollowedCursor, len(resp.Cursors))
		for i, c := range resp.Cursors {
			out.Cursors[i] = &nodepb.FollowedCursor{Child: c.Child, Epoch: c.Epoch, NextOffset: c.NextOffset}
		}
	}
	return out, nil
}

// storedToPB carries records as the log holds them: offset and commit time
// included (a follower's copy must be the same record at the same offset).
func storedToPB(recs []storage.Record) []*nodepb.StoredRecord {
	out := make([]*nodepb.StoredRecord, len(recs))
	backing := make([]nodepb.StoredRecord, len(recs))
	for i, r := range recs {
		m := &backing[i]
		m.Offset, m.CommittedAt, m.Key, m.Payload, m.Origin, m.Seq = r.Offset, r.CommittedAt, r.Key, r.Payload, r.Origin, r.Seq
		if len(r.Headers) > 0 {
			m.Headers = make([]*nodepb.Header, len(r.Headers))
			for j, h := range r.Headers {
				m.Headers[j] = &nodepb.Header{Name: h.Name, Value: h.Value}
			}
		}
		out[i] = m
	}
	return out
}

// storedFromPB refuses headers the follower's log could not read back, as
// recordsFromPB does for a commit (header.CheckStored: the stored caps,
// reserved names included), and records whose offsets do not ascend by
// one: a follower appends them where they say they belong.
func storedFromPB(recs []*nodepb.StoredRecord) ([]storage.Record, error) {
	out := make([]storage.Record, len(recs))
	for i, r := range recs {
		if i > 0 && r.GetOffset() != out[i-1].Offset+1 {
			return nil, apierr.New(http.StatusBadGateway, "fetch: record %d has offset %d after %d", i, r.GetOffset(), out[i-1].Offset)
		}
		out[i] = storage.Record{Offset: r.GetOffset(), CommittedAt: r.GetCommittedAt(), Key: r.GetKey(), Payload: r.GetPayload(),
			Origin: r.GetOrigin(), Seq: r.GetSeq()}
		if phs := r.GetHeaders(); len(phs) > 0 {
			hs := make([]header.Header, len(phs))
			for j, h := range phs {
				hs[j] = header.Header{Name: h.GetName(), Value: h.GetValue()}
			}
			if err := header.CheckStored(hs); err != nil {
				return nil, apierr.New(http.StatusBadGateway, "fetch: record %d: %v", i, err)
			}
			out[i].Headers = hs
		}
	}
	return out, nil
}

// Propose forwards an encoded metastore command to the leader at addr
// (meta.Forwarder).
func (p *Pool) Propose(ctx context.Context, addr string, cmd []byte) error {
	_, err := invoke(ctx, p, addr, "Propose", DefaultTimeout, func(ctx context.Context, c nodepb.NodeClient) (*nodepb.ProposeResponse, error) {
		return c.Propose(ctx, &nodepb.ProposeRequest{Command: cmd})
	})
	return err
}

func (s *service) Propose(ctx context.Context, req *nodepb.ProposeRequest) (*nodepb.ProposeResponse, error) {
	if err := s.h.Propose(ctx, req.GetCommand()); err != nil {
		return nil, err
	}
	return &nodepb.ProposeResponse{}, nil
}
