package meta

import (
	"bytes"
	"encoding/binary"
	"io"
	"maps"
	"testing"
)

// Tags, protocol attributes and modified_at come from the commands (the
// proposer's stamp, never the FSM's clock), are replaced whole by an
// update (an empty map clears) and survive a snapshot restore.
func TestTopicTagsAttributesAndModifiedAt(t *testing.T) {
	t.Parallel()
	f := newBareFSM(t)
	top := plainTopic("q", 1)
	top.CreatedAt, top.ModifiedAt = 100, 100
	top.Tags = map[string]string{"team": "pay", "env": ""}
	top.AWSAttributes = map[string]string{"DisplayName": "Q"}
	must(t, applyRaw(t, f, 1, OpCreateTopic, CreateTopicCmd{Topic: top}))
	got := bareTopic(t, f, "q")
	if !maps.Equal(got.Tags, top.Tags) || !maps.Equal(got.AWSAttributes, top.AWSAttributes) || got.ModifiedAt != 100 {
		t.Fatalf("created: tags %v attrs %v modified %d", got.Tags, got.AWSAttributes, got.ModifiedAt)
	}

	tags := map[string]string{"team": "ops"}
	empty := map[string]string{}
	must(t, applyRaw(t, f, 2, OpUpdateTopic, TopicUpdate{Name: "q", Tags: &tags, AWSAttributes: &empty, ModifiedAt: 250}))
	got = bareTopic(t, f, "q")
	if !maps.Equal(got.Tags, tags) || got.AWSAttributes != nil || got.ModifiedAt != 250 || got.Version != 2 {
		t.Fatalf("updated: tags %v attrs %v modified %d version %d", got.Tags, got.AWSAttributes, got.ModifiedAt, got.Version)
	}
	// An update stamped earlier than the record (a proposer's clock behind)
	// changes what it sets but never moves modified_at back.
	ret := int64(7_200_000)
	must(t, applyRaw(t, f, 3, OpUpdateTopic, TopicUpdate{Name: "q", RetentionMs: &ret, ModifiedAt: 200}))
	if got = bareTopic(t, f, "q"); got.ModifiedAt != 250 || got.RetentionMs != ret {
		t.Fatalf("stamp behind the record: modified %d retention %d", got.ModifiedAt, got.RetentionMs)
	}
	// An update without tags leaves them.
	if !maps.Equal(got.Tags, tags) {
		t.Fatalf("tags %v after an update without them", got.Tags)
	}
	// A map alone is a change (an update stamped with no time of its own).
	attrs := map[string]string{"Policy": "{}"}
	must(t, applyRaw(t, f, 4, OpUpdateTopic, TopicUpdate{Name: "q", AWSAttributes: &attrs}))
	if got = bareTopic(t, f, "q"); !maps.Equal(got.AWSAttributes, attrs) || got.Version != 4 || got.ModifiedAt != 250 {
		t.Fatalf("attributes alone: %+v", got)
	}
	tags2 := map[string]string{"env": "prod"}
	must(t, applyRaw(t, f, 5, OpUpdateTopic, TopicUpdate{Name: "q", Tags: &tags2}))
	if got = bareTopic(t, f, "q"); !maps.Equal(got.Tags, tags2) || got.Version != 5 {
		t.Fatalf("tags alone: %+v", got)
	}
	// Deterministic: the same commands applied elsewhere give the same record.
	g := newBareFSM(t)
	must(t, applyRaw(t, g, 1, OpCreateTopic, CreateTopicCmd{Topic: top}))
	must(t, applyRaw(t, g, 2, OpUpdateTopic, TopicUpdate{Name: "q", Tags: &tags, AWSAttributes: &empty, ModifiedAt: 250}))
	must(t, applyRaw(t, g, 3, OpUpdateTopic, TopicUpdate{Name: "q", RetentionMs: &ret, ModifiedAt: 200}))
	must(t, applyRaw(t, g, 4, OpUpdateTopic, TopicUpdate{Name: "q", AWSAttributes: &attrs}))
	must(t, applyRaw(t, g, 5, OpUpdateTopic, TopicUpdate{Name: "q", Tags: &tags2}))
	if a, b := encodeBare(t, f), encodeBare(t, g); !bytes.Equal(a, b) {
		t.Fatalf("replicas differ:\n%s\n%s", a, b)
	}

	h := restoredCopy(t, f)
	restored := bareTopic(t, h, "q")
	if !maps.Equal(restored.Tags, tags2) || !maps.Equal(restored.AWSAttributes, attrs) || restored.ModifiedAt != 250 {
		t.Fatalf("restored: %+v", restored)
	}
	c := h.cache()
	if i, ok := c.index["q"]; !ok || !maps.Equal(c.sorted[i].Tags, tags2) || c.sorted[i].ModifiedAt != 250 {
		t.Fatalf("restored cache: %+v", c.sorted)
	}
}

// restoredCopy is a fresh FSM restored from a snapshot of f.
func restoredCopy(t *testing.T, f *fsm) *fsm {
	t.Helper()
	snap, err := f.Snapshot()
	must(t, err)
	var sink memSink
	must(t, snap.Persist(&sink))
	snap.Release()
	g := newBareFSM(t)
	must(t, g.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))
	return g
}

func encodeBare(t *testing.T, f *fsm) []byte {
	t.Helper()
	raw, err := encodeTopic(bareTopic(t, f, "q"))
	must(t, err)
	return raw
}

// A record written before tags, attributes and modified_at decodes as
// before, and writes back without them; an old update command (none of
// the new fields) still applies and leaves modified_at 0.
func TestTopicRecordBeforeTagsDecodes(t *testing.T) {
	t.Parallel()
	old := []byte(`{"name":"o","partitions":2,"retention_ms":3600000,"visibility_timeout_ms":30000,` +
		`"max_in_flight_per_partition":10,"max_acked_ahead_per_partition":10,"created_at":77,"dedupe_window_ms":0}`)
	raw := binary.BigEndian.AppendUint64(nil, 9)
	got, err := decodeTopic([]byte("o"), append(raw, old...))
	must(t, err)
	if got.Tags != nil || got.AWSAttributes != nil || got.ModifiedAt != 0 || got.CreatedAt != 77 || got.Version != 9 || got.Partitions != 2 {
		t.Fatalf("old record: %+v", got)
	}
	again, err := encodeTopic(got)
	must(t, err)
	if !bytes.Equal(again[8:], old) {
		t.Fatalf("old record re-encoded differently:\n%s\n%s", again[8:], old)
	}

	f := newBareFSM(t)
	must(t, applyRaw(t, f, 1, OpCreateTopic, CreateTopicCmd{Topic: plainTopic("o", 1)}))
	payload := []byte(`{"name":"o","retention_ms":7200000}`)
	cmd := Command{Op: OpUpdateTopic, Payload: payload}
	var u TopicUpdate
	must(t, decodePayload(cmd.Op, cmd.Payload, &u))
	must(t, applyRaw(t, f, 2, OpUpdateTopic, u))
	if got := bareTopic(t, f, "o"); got.ModifiedAt != 0 || got.RetentionMs != 7_200_000 || got.Tags != nil {
		t.Fatalf("old update: %+v", got)
	}
}
