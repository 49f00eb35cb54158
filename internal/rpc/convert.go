package rpc

import (
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/storage"

	nodepb "github.com/narad-io/narad/internal/rpc/proto"
)

// Conversions between the wire messages and the Go API. Byte slices are
// shared, not copied: a commit batch can be tens of MiB and neither side
// mutates them after the call.

// recordsToPB points into one backing array of messages: one allocation
// per commit instead of one per record (a dispatch bucket of a batch
// produce carries hundreds).
// Headers likewise: one array of header messages for the whole commit,
// none at all when no record has headers.
func recordsToPB(recs []storage.Record) []*nodepb.Record {
	out := make([]*nodepb.Record, len(recs))
	backing := make([]nodepb.Record, len(recs))
	nh := 0
	for i := range recs {
		nh += len(recs[i].Headers)
	}
	var hbacking []nodepb.Header
	var hptrs []*nodepb.Header
	if nh > 0 {
		hbacking, hptrs = make([]nodepb.Header, nh), make([]*nodepb.Header, nh)
	}
	for i, r := range recs {
		m := &backing[i]
		m.Key, m.Payload, m.Origin, m.Seq = r.Key, r.Payload, r.Origin, r.Seq
		if len(r.Headers) > 0 {
			hs := hptrs[:len(r.Headers):len(r.Headers)]
			for j, h := range r.Headers {
				hbacking[j].Name, hbacking[j].Value = h.Name, h.Value
				hs[j] = &hbacking[j]
			}
			hbacking, hptrs = hbacking[len(r.Headers):], hptrs[len(r.Headers):]
			m.Headers = hs
		}
		out[i] = m
	}
	return out
}

// recordsFromPB refuses headers the owner's log could not read back: a
// peer is trusted to have applied the client rules (its edge did), not
// to send more than the stored caps (header.Check with Reserved: the
// broker's own headers are allowed).
func recordsFromPB(recs []*nodepb.Record) ([]storage.Record, error) {
	out := make([]storage.Record, len(recs))
	for i, r := range recs {
		out[i] = storage.Record{Key: r.GetKey(), Payload: r.GetPayload(), Origin: r.GetOrigin(), Seq: r.GetSeq()}
		if phs := r.GetHeaders(); len(phs) > 0 {
			hs := make([]header.Header, len(phs))
			for j, h := range phs {
				hs[j] = header.Header{Name: h.GetName(), Value: h.GetValue()}
			}
			if err := header.Check(hs, header.Reserved); err != nil {
				return nil, apierr.BadRequest("record %d: %v", i, err)
			}
			out[i].Headers = hs
		}
	}
	return out, nil
}

func intsToPB(xs []int) []int32 {
	if xs == nil {
		return nil
	}
	out := make([]int32, len(xs))
	for i, x := range xs {
		out[i] = int32(x)
	}
	return out
}

func intsFromPB(xs []int32) []int {
	if len(xs) == 0 {
		return nil
	}
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}

func statsToPB(ss []PartitionStats) []*nodepb.PartitionStats {
	out := make([]*nodepb.PartitionStats, len(ss))
	for i, s := range ss {
		p := &nodepb.PartitionStats{
			Partition:          int32(s.Partition),
			Available:          s.Available,
			Segments:           int64(s.Segments),
			OldestOffset:       s.OldestOffset,
			HighWatermark:      s.HighWatermark,
			SizeBytes:          s.SizeBytes,
			OldestSegmentAt:    s.OldestSegmentAt,
			ConsumerFrontier:   s.ConsumerFrontier,
			Exact:              s.Exact,
			InFlight:           int64(s.InFlight),
			OldestUnconsumedAt: s.OldestUnconsumedAt,
			CommitStall:        s.CommitStall,
		}
		for _, c := range s.Cursors {
			p.Cursors = append(p.Cursors, &nodepb.CursorPosition{Child: c.Child, Epoch: c.Epoch, NextOffset: c.NextOffset,
				State: c.State, AckedAtMs: c.AckedAtMs, StateReason: c.StateReason, RejectedOffset: c.RejectedOffset})
		}
		out[i] = p
	}
	return out
}

func statsFromPB(ps []*nodepb.PartitionStats) []PartitionStats {
	out := make([]PartitionStats, len(ps))
	for i, p := range ps {
		s := PartitionStats{
			Partition:          int(p.GetPartition()),
			Available:          p.GetAvailable(),
			Segments:           int(p.GetSegments()),
			OldestOffset:       p.GetOldestOffset(),
			HighWatermark:      p.GetHighWatermark(),
			SizeBytes:          p.GetSizeBytes(),
			OldestSegmentAt:    p.GetOldestSegmentAt(),
			ConsumerFrontier:   p.GetConsumerFrontier(),
			Exact:              p.GetExact(),
			InFlight:           int(p.GetInFlight()),
			OldestUnconsumedAt: p.GetOldestUnconsumedAt(),
			CommitStall:        p.GetCommitStall(),
		}
		for _, c := range p.GetCursors() {
			s.Cursors = append(s.Cursors, CursorPosition{Child: c.GetChild(), Epoch: c.GetEpoch(), NextOffset: c.GetNextOffset(),
				State: c.GetState(), AckedAtMs: c.GetAckedAtMs(), StateReason: c.GetStateReason(), RejectedOffset: c.RejectedOffset})
		}
		out[i] = s
	}
	return out
}

func memberToPB(m Member) *nodepb.Member {
	return &nodepb.Member{Id: m.ID, RaftAddr: m.RaftAddr, RpcAddr: m.RPCAddr, HttpAddr: m.HTTPAddr, DiskId: m.DiskID, Network: m.Network}
}

// memberFromPB tolerates a missing member (nil getters give ""): the
// handler validates the id, with its own words.
func memberFromPB(m *nodepb.Member) Member {
	return Member{ID: m.GetId(), RaftAddr: m.GetRaftAddr(), RPCAddr: m.GetRpcAddr(), HTTPAddr: m.GetHttpAddr(), DiskID: m.GetDiskId(),
		Network: m.GetNetwork()}
}

func unreachableToPB(us []UnreachableLeader) []*nodepb.UnreachableLeader {
	var out []*nodepb.UnreachableLeader
	for _, u := range us {
		out = append(out, &nodepb.UnreachableLeader{Topic: u.Topic, Partition: int32(u.Partition), LeaderId: u.Leader,
			LeaderEpoch: u.LeaderEpoch, UnreachableMs: u.For.Milliseconds()})
	}
	return out
}

// unreachableFromPB keeps what the sender sent; the controller judges it
// (an unknown partition or leader matches none of its records).
func unreachableFromPB(us []*nodepb.UnreachableLeader) []UnreachableLeader {
	var out []UnreachableLeader
	for _, u := range us {
		out = append(out, UnreachableLeader{Topic: u.GetTopic(), Partition: int(u.GetPartition()), Leader: u.GetLeaderId(),
			LeaderEpoch: u.GetLeaderEpoch(), For: time.Duration(u.GetUnreachableMs()) * time.Millisecond})
	}
	return out
}

// toMillis rounds up, so a positive Retry-After never becomes zero on the
// wire (a 503 without one would tell the client nothing).
func toMillis(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

func fromMillis(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
