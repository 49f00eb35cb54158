package meta

import (
	"reflect"
	"testing"

	"github.com/hashicorp/raft"
)

// Raft replays the log after its last snapshot on every start; entries at or
// below fsm.db's applied index must not apply twice.
func TestFSMSkipsEntriesAlreadyApplied(t *testing.T) {
	t.Parallel()
	f := newBareFSM(t)
	must(t, applyRaw(t, f, 5, OpCreateTopic, CreateTopicCmd{Topic: plainTopic("x", 1)}))
	must(t, applyRaw(t, f, 6, OpDeleteTopic, DeleteTopicCmd{Name: "x"}))
	before := dump(t, f)
	// The replayed create would succeed (x is gone) if it were applied.
	must(t, applyRaw(t, f, 5, OpCreateTopic, CreateTopicCmd{Topic: plainTopic("x", 1)}))
	if got := dump(t, f); !reflect.DeepEqual(got, before) {
		t.Fatalf("replayed entry applied again: %+v", got.Topics)
	}
}

// A refused command writes nothing, not even the applied index; replaying it
// on the same state refuses it the same way.
func TestFSMRefusedCommandLeavesNoTrace(t *testing.T) {
	t.Parallel()
	f := newBareFSM(t)
	must(t, applyRaw(t, f, 1, OpCreateTopic, CreateTopicCmd{Topic: plainTopic("x", 1)}))
	before := dump(t, f)
	wantErr(t, applyRaw(t, f, 2, OpCreateTopic, CreateTopicCmd{Topic: plainTopic("x", 1)}), ErrExists)
	if got := dump(t, f); !reflect.DeepEqual(got, before) || got.Applied != 1 {
		t.Fatalf("refused command changed the database: %+v", got)
	}
	wantErr(t, applyRaw(t, f, 2, OpCreateTopic, CreateTopicCmd{Topic: plainTopic("x", 1)}), ErrExists)
}

func TestFSMRejectsMalformedCommands(t *testing.T) {
	t.Parallel()
	f := newBareFSM(t)
	for name, data := range map[string][]byte{
		"empty":         nil,
		"unknown op":    append([]byte{200}, `{}`...),
		"bad json":      append([]byte{byte(OpCreateTopic)}, `{"topic":`...),
		"unknown field": append([]byte{byte(OpDeleteTopic)}, `{"name":"x","force":true}`...),
		"trailing data": append([]byte{byte(OpDeleteTopic)}, `{"name":"x"} {}`...),
	} {
		resp := f.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: data})
		err, _ := resp.(error)
		wantErr(t, err, ErrInvalid)
		if f.state.Load().applied != 0 {
			t.Fatalf("%s: malformed command advanced the applied index", name)
		}
	}
	// Non-command entries are not the FSM's business.
	if resp := f.Apply(&raft.Log{Index: 1, Type: raft.LogNoop}); resp != nil {
		t.Fatalf("noop entry: %v", resp)
	}
}

func TestCommandEncodingRoundTrip(t *testing.T) {
	t.Parallel()
	cmd, err := NewCommand(OpAttach, AttachCmd{Child: "c", AttachSpec: AttachSpec{Parent: "p", Epoch: "e", AttachOffsets: []uint64{3}, DelayMs: 5}})
	must(t, err)
	back, err := DecodeCommand(cmd.Encode())
	must(t, err)
	if back.Op != OpAttach || string(back.Payload) != string(cmd.Payload) {
		t.Fatalf("round trip: %+v", back)
	}
	var a AttachCmd
	must(t, decodePayload(back.Op, back.Payload, &a))
	if a.Parent != "p" || a.Child != "c" || a.DelayMs != 5 || a.AttachOffsets[0] != 3 {
		t.Fatalf("payload: %+v", a)
	}
	if OpAttach.String() != "attach" || Op(99).String() != "op-99" {
		t.Fatal("op names")
	}
}
