package replica

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/narad-io/narad/internal/storage"
)

// The leader's side state travels only to a follower whose fetch echoes
// another version: an unchanged state is not sent again.
func TestLeaderSendsSideStateOnlyWhenItChanged(t *testing.T) {
	r := newLeaderRig(t, 3)
	st := SideState{Version: 7, Counts: []storage.CountEntry{{Offset: 1, Count: 2}}, Cursors: []CursorPosition{{Child: "x", Epoch: "e1", NextOffset: 2}}}
	r.l.cfg.State = func() SideState { return st }
	fetch := func(echo uint64) FetchResponse {
		t.Helper()
		v := r.md.view()
		resp, err := r.l.HandleFetch(context.Background(), FetchRequest{Topic: v.Topic, Incarnation: v.Incarnation, Partition: v.Partition,
			Epoch: v.Epoch, Follower: "b", Offset: 3, StateVersion: echo})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := fetch(0); resp.StateVersion != 7 || !slices.Equal(resp.Counts, st.Counts) || !slices.Equal(resp.Cursors, st.Cursors) {
		t.Fatalf("first fetch carried %d %v %v; want the state of version 7", resp.StateVersion, resp.Counts, resp.Cursors)
	}
	if resp := fetch(7); resp.StateVersion != 0 || resp.Counts != nil || resp.Cursors != nil {
		t.Fatalf("a fetch echoing version 7 got the state again: %+v", resp)
	}
	st.Version = 8
	if resp := fetch(7); resp.StateVersion != 8 {
		t.Fatalf("a changed state was not sent: version %d", resp.StateVersion)
	}
	st.Version = 0 // no snapshot yet
	if resp := fetch(0); resp.StateVersion != 0 {
		t.Fatalf("version 0 (no snapshot) was sent: %+v", resp)
	}
}

// A follower hands the leader's side state on clamped to its visible
// high watermark, echoes the version only once the state was taken, and
// starts the echo again in a new epoch (its leader's versions are its
// own).
func TestFollowerAppliesSideStateClampedAndEchoesItsVersion(t *testing.T) {
	r := newLeaderRig(t, 0)
	flog := newMemLog()
	var got []SideState
	var fail error
	f, err := NewFollower(FollowerConfig{Self: "b", View: r.md.view(), Log: flog, Transport: &directTransport{}, Clock: r.clk,
		OnState: func(s SideState) error {
			if fail != nil {
				return fail
			}
			got = append(got, s)
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	_, req, _, err := f.prepare()
	if err != nil || req.StateVersion != 0 {
		t.Fatalf("first fetch: %+v %v; want no echo", req, err)
	}
	recs := make([]storage.Record, 5)
	for i := range recs {
		recs[i] = storage.Record{Offset: uint64(i), Payload: []byte{byte(i)}}
	}
	resp := FetchResponse{Epoch: req.Epoch, Committed: 3, Records: recs, StateVersion: 7,
		Counts:  []storage.CountEntry{{Offset: 1, Count: 2}, {Offset: 3, Count: 4}, {Offset: 4, Count: 9}},
		Cursors: []CursorPosition{{Child: "x", Epoch: "e1", NextOffset: 2}, {Child: "y", Epoch: "e2", NextOffset: 50}}}
	if err := f.apply(req, resp, nil); err != nil {
		t.Fatal(err)
	}
	if flog.HWM() != 3 {
		t.Fatalf("hwm %d, want 3", flog.HWM())
	}
	want := SideState{Version: 7, Counts: []storage.CountEntry{{Offset: 1, Count: 2}},
		Cursors: []CursorPosition{{Child: "x", Epoch: "e1", NextOffset: 2}, {Child: "y", Epoch: "e2", NextOffset: 3}}}
	if len(got) != 1 || got[0].Version != want.Version || !slices.Equal(got[0].Counts, want.Counts) || !slices.Equal(got[0].Cursors, want.Cursors) {
		t.Fatalf("handed on %+v; want %+v (nothing past the high watermark 3)", got, want)
	}
	_, req, _, _ = f.prepare()
	if req.StateVersion != 7 {
		t.Fatalf("echo %d, want 7", req.StateVersion)
	}
	// A state that could not be written is not echoed: the leader sends it again.
	fail = errors.New("test: disk full")
	if err := f.apply(req, FetchResponse{Epoch: req.Epoch, Committed: 3, StateVersion: 8}, nil); err != nil {
		t.Fatalf("a failed state write failed the fetch: %v", err)
	}
	if _, req, _, _ = f.prepare(); req.StateVersion != 7 {
		t.Fatalf("echo %d after a failed write of version 8, want 7", req.StateVersion)
	}
	// A new epoch: its leader's versions are its own.
	_ = r.md.electLeader("c")
	_ = r.md.StartEpoch(context.Background(), "t", 0, 2, "c", 5)
	f.Update(r.md.view())
	if _, req, _, _ = f.prepare(); req.Epoch != 2 || req.StateVersion != 0 {
		t.Fatalf("fetch in epoch 2: %+v; want no echo of epoch 1's version", req)
	}
}
