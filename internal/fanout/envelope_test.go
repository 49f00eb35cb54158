package fanout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/awsattr"
	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/messageid"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/topic"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// Tests of rule enveloped links.

const testARN = "arn:aws:sns:us-east-1:000000000000:news"

var testEnvelope = json.RawMessage(`{"format": "sns", "topic_arn": "` + testARN + `"}`)

// snsNote is the notification as a test reads it back.
type snsNote struct {
	Type              string
	MessageId         string
	TopicArn          string
	Subject           *string
	Message           string
	Timestamp         string
	SignatureVersion  string
	Signature         *string
	SigningCertURL    *string
	UnsubscribeURL    *string
	MessageAttributes map[string]struct{ Type, Value string }
}

func parseNote(t testing.TB, b []byte) snsNote {
	t.Helper()
	var n snsNote
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&n); err != nil {
		t.Fatalf("a copy's payload is not the notification: %v\n%s", err, b)
	}
	return n
}

// attachEnveloped attaches child under parent with the test envelope and,
// unless policy is "", a filter.
func (n *node) attachEnveloped(parent, child, policy string) AttachView {
	n.t.Helper()
	req := AttachRequest{Child: child, Envelope: testEnvelope}
	if policy != "" {
		req.Filter = json.RawMessage(policy)
	}
	v, err := n.e.Attach(n.ctx(), parent, req)
	if err != nil {
		n.t.Fatal(err)
	}
	return v
}

// awsRecord is a record as the SNS edge stores a Publish: attributes as
// headers (awsattr.Encode), a subject, maybe a producer id.
func awsRecord(t testing.TB, payload, subject, producerID string, attrs ...awsattr.Attribute) storage.Record {
	t.Helper()
	hs, meta, err := awsattr.Encode(attrs, awsattr.Meta{Subject: subject})
	if err != nil {
		t.Fatal(err)
	}
	if meta != "" {
		hs = header.WithAWS(hs, meta)
	}
	if producerID != "" {
		hs = header.WithMsgID(hs, producerID)
	}
	return storage.Record{Key: []byte("g1"), Payload: []byte(payload), Headers: hs}
}

// A link with an envelope copies each record as SNS's notification of
// it: the MessageId SNS would answer for the source, the TopicArn, the
// subject, the payload as Message, the commit time, the attributes; the
// copy keeps its key and the broker's headers, no client header and no
// narad-aws. The attach answer and the listing show the envelope.
func TestEnvelopedLinkCopiesNotifications(t *testing.T) {
	n := newNode(t, Config{Linger: time.Millisecond})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 1, 0)
	av := n.attachEnveloped("src", "dst", "")
	if av.Envelope == nil || *av.Envelope != (meta.LinkEnvelope{Format: "sns", TopicARN: testARN}) {
		t.Fatalf("attach answer's envelope %+v", av.Envelope)
	}
	n.e.Start()

	recs := []storage.Record{
		awsRecord(t, `{"hello": "<world> & \"you\""}`, "Greeting", "",
			awsattr.Attribute{Name: "Color", DataType: "String", StringValue: "blue"},
			awsattr.Attribute{Name: "n", DataType: "Number", StringValue: "42"},
			awsattr.Attribute{Name: "raw", DataType: "Binary", BinaryValue: []byte{0, 1, 0xfe}}),
		awsRecord(t, "line one\nline two\x01\xff café \U0001F600\xe2\x82", "", "dedupe-7"),
		{Payload: []byte("plain /v1 record"), Headers: []header.Header{{Name: "trace-id", Value: "t1"}}},
		{Payload: []byte("bare")},
	}
	if err := commitLocal(n.b, n.ctx(), "src", 0, recs); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "four copies", func() bool { return len(n.read("dst", 0)) == len(recs) })
	src, got := n.read("src", 0), n.read("dst", 0)
	parent, _ := n.meta.Topic("src")
	for i := range got {
		note := parseNote(t, got[i].Payload)
		sourceID := messageid.Of("src", parent.Incarnation, 0, src[i].Offset, src[i].Origin, src[i].Seq)
		producer, _ := header.MsgIDOf(src[i].Headers)
		wantMsg := string(src[i].Payload)
		if i == 1 {
			wantMsg = "line one\nline two\x01\ufffd café \U0001F600\ufffd\ufffd" // invalid UTF-8 replaced, byte by byte
		}
		wantTime := time.UnixMilli(src[i].CommittedAt).UTC().Format("2006-01-02T15:04:05.000Z")
		switch {
		case note.Type != "Notification" || note.SignatureVersion != "1" || note.Signature == nil || note.SigningCertURL == nil || note.UnsubscribeURL == nil:
			t.Fatalf("copy %d: fixed fields %+v", i, note)
		case note.MessageId != awsattr.MessageID("src", sourceID, producer):
			t.Fatalf("copy %d: MessageId %q, want %q", i, note.MessageId, awsattr.MessageID("src", sourceID, producer))
		case note.TopicArn != testARN || note.Message != wantMsg || note.Timestamp != wantTime:
			t.Fatalf("copy %d: TopicArn %q Message %q Timestamp %q, want %q %q %q", i, note.TopicArn, note.Message, note.Timestamp, testARN, wantMsg, wantTime)
		case !bytes.Equal(got[i].Key, src[i].Key):
			t.Fatalf("copy %d: key %q, want %q", i, got[i].Key, src[i].Key)
		}
		if id, _ := header.Get(got[i].Headers, header.SourceID); id != sourceID {
			t.Fatalf("copy %d: source id %q, want %q", i, id, sourceID)
		}
		for _, h := range got[i].Headers {
			if h.Name != header.SourceID && h.Name != header.MsgID {
				t.Fatalf("copy %d carries header %q: an enveloped copy keeps only the broker's", i, h.Name)
			}
		}
	}
	if n0 := parseNote(t, got[0].Payload); n0.Subject == nil || *n0.Subject != "Greeting" || len(n0.MessageAttributes) != 3 ||
		n0.MessageAttributes["Color"] != (struct{ Type, Value string }{"String", "blue"}) ||
		n0.MessageAttributes["n"] != (struct{ Type, Value string }{"Number", "42"}) ||
		n0.MessageAttributes["raw"] != (struct{ Type, Value string }{"Binary", "AAH+"}) {
		t.Fatalf("copy 0: subject and attributes %+v", n0)
	}
	if !strings.Contains(string(got[0].Payload), `<world> & `) {
		t.Fatalf("copy 0 escapes more than JSON needs: %s", got[0].Payload)
	}
	if n1 := parseNote(t, got[1].Payload); n1.Subject != nil || n1.MessageAttributes != nil || n1.MessageId == producerless(t, n, 1) {
		t.Fatalf("copy 1: %+v (a deduplicated record's MessageId is derived from its producer id)", n1)
	}
	if id, _ := header.MsgIDOf(got[1].Headers); id != "dedupe-7" {
		t.Fatalf("copy 1 lost the producer id header: %v", got[1].Headers)
	}
	if n2 := parseNote(t, got[2].Payload); n2.MessageAttributes["trace-id"] != (struct{ Type, Value string }{"String", "t1"}) {
		t.Fatalf("copy 2: a /v1 record's headers are String attributes: %+v", n2.MessageAttributes)
	}
	// SNS's field order.
	order := []string{`{"Type":`, `,"MessageId":`, `,"TopicArn":`, `,"Subject":`, `,"Message":`, `,"Timestamp":`, `,"SignatureVersion":`,
		`,"Signature":`, `,"SigningCertURL":`, `,"UnsubscribeURL":`, `,"MessageAttributes":`}
	last := -1
	for _, f := range order {
		i := strings.Index(string(got[0].Payload), f)
		if i <= last {
			t.Fatalf("field %s out of SNS's order in %s", f, got[0].Payload)
		}
		last = i
	}
	v, err := n.e.Children("src")
	if err != nil || len(v.Children) != 1 || v.Children[0].Envelope == nil || v.Children[0].Envelope.TopicARN != testARN {
		t.Fatalf("listing %+v %v", v, err)
	}
}

// producerless is the MessageId copy i's source would have without its
// producer id.
func producerless(t testing.TB, n *node, i int) string {
	parent, _ := n.meta.Topic("src")
	src := n.read("src", 0)[i]
	return messageid.Of("src", parent.Incarnation, 0, src.Offset, src.Origin, src.Seq)
}

// A record whose notification would exceed the record cap is copied raw,
// as without the envelope, and counted; the link goes on.
func TestEnvelopeTooLargeGoesRaw(t *testing.T) {
	n := newNode(t, Config{Linger: time.Millisecond})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 1, 0)
	n.attachEnveloped("src", "dst", "")
	n.e.Start()
	big := storage.Record{Payload: bytes.Repeat([]byte(`"`), maxEnvelopeBytes/2+1), Headers: []header.Header{{Name: "trace-id", Value: "t1"}}}
	if err := commitLocal(n.b, n.ctx(), "src", 0, []storage.Record{big, {Payload: []byte("small")}}); err != nil {
		t.Fatal(err)
	}
	n.waitCursorAt("dst", 2)
	got := n.read("dst", 0)
	if len(got) != 2 || !bytes.Equal(got[0].Payload, big.Payload) {
		t.Fatalf("the child holds %d records, the first of %d bytes: want the large one raw", len(got), len(got[0].Payload))
	}
	if v, _ := header.Get(got[0].Headers, "trace-id"); v != "t1" {
		t.Fatalf("the raw copy lost its headers: %v", got[0].Headers)
	}
	if _, ok := header.Get(got[0].Headers, header.SourceID); !ok {
		t.Fatalf("the raw copy has no source id: %v", got[0].Headers)
	}
	if parseNote(t, got[1].Payload).Message != "small" {
		t.Fatalf("the record after it is not wrapped: %s", got[1].Payload)
	}
	if got := counterValue(t, n, "narad_fanout_envelope_skipped_total", "src", "dst"); got != 1 {
		t.Fatalf("narad_fanout_envelope_skipped_total = %v, want 1", got)
	}
	// Exactly at the cap it is still wrapped.
	r := storage.Record{Payload: []byte("x")}
	fixed := len(notification(&meta.LinkEnvelope{Format: "sns", TopicARN: testARN}, "src", messageid.Of("src", 0, 0, 0, 0, 0), &r)) - 1
	r.Payload = bytes.Repeat([]byte("x"), maxEnvelopeBytes-fixed)
	out, raw := withEnvelopes([]storage.Record{r}, meta.Topic{Name: "src"}, 0, &meta.LinkEnvelope{Format: "sns", TopicARN: testARN})
	if raw != 0 || len(out[0].Payload) != maxEnvelopeBytes {
		t.Fatalf("an envelope of exactly %d bytes: raw %d, %d bytes", maxEnvelopeBytes, raw, len(out[0].Payload))
	}
}

// counterValue reads a counter of labels parent and child (0 when the
// series does not exist).
func counterValue(t testing.TB, n *node, name, parent, child string) float64 {
	t.Helper()
	v, _ := gaugeValue(t, n.m, name, map[string]string{"parent": parent, "child": child})
	return v
}

// A filter matches the source record (its headers, before wrapping): an
// enveloped, filtered link copies exactly the matching records, wrapped.
func TestEnvelopeWithFilterWrapsTheMatching(t *testing.T) {
	n := newNode(t, Config{Linger: time.Millisecond})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 1, 0)
	n.attachEnveloped("src", "dst", `{"kind": ["keep"]}`)
	n.e.Start()
	var recs []storage.Record
	var want []string
	for i := range 20 {
		r := kinded(fmt.Sprint(i), []string{"keep", "drop", ""}[i%3])
		recs = append(recs, r)
		if i%3 == 0 {
			want = append(want, string(r.Payload))
		}
	}
	if err := commitLocal(n.b, n.ctx(), "src", 0, recs); err != nil {
		t.Fatal(err)
	}
	n.waitCursorAt("dst", 20)
	var got []string
	for _, r := range n.read("dst", 0) {
		note := parseNote(t, r.Payload)
		if note.MessageAttributes["kind"].Value != "keep" {
			t.Fatalf("a wrapped copy without its source's attribute: %s", r.Payload)
		}
		got = append(got, note.Message)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the child holds %q, want exactly the matching records wrapped %q", got, want)
	}
}

// Setting the envelope by PATCH applies from the next slab, leaves the
// filter, and null removes it; a malformed envelope is 400 and changes
// nothing, in an attach, a patch and a create.
func TestEnvelopePatchAndRefusals(t *testing.T) {
	n := newNode(t, Config{Linger: time.Millisecond})
	n.createTopic("src", 1, 0)
	n.createTopic("dst", 1, 0)
	for _, env := range []string{`{"format": "json", "topic_arn": "arn:x"}`, `{"format": "sns", "topic_arn": "news"}`, `{"format": "sns"}`,
		`{"format": "sns", "topic_arn": "arn:x", "raw": true}`, `"sns"`, `{"format": "sns", "topic_arn": "arn:é"}`} {
		if _, err := n.e.Attach(n.ctx(), "src", AttachRequest{Child: "dst", Envelope: json.RawMessage(env)}); !errors.Is(err, refusal.ErrInvalid) {
			t.Errorf("attach with envelope %s: %v, want invalid", env, err)
		}
		if _, err := n.e.CreateChild(n.ctx(), topic.CreateRequest{Name: "made", Partitions: 1, Parent: "src", FanoutEnvelope: json.RawMessage(env)}, ""); !errors.Is(err, refusal.ErrInvalid) {
			t.Errorf("create with envelope %s: %v, want invalid", env, err)
		}
	}
	if _, err := n.e.Attach(n.ctx(), "src", AttachRequest{Child: "far", Envelope: testEnvelope, Remote: json.RawMessage(`{"url": "http://x", "topic": "t"}`)}); !errors.Is(err, refusal.ErrInvalid) {
		t.Errorf("remote attach with an envelope: %v", err)
	}
	if d, _ := n.meta.Topic("dst"); d.Parent != "" || d.FanoutEnvelope != nil {
		t.Fatalf("a refused attach stored %+v", d)
	}
	if _, ok := n.meta.Topic("made"); ok {
		t.Fatal("a refused create made the topic")
	}
	n.attachFiltered("src", "dst", `{"kind": ["keep"]}`, "")
	n.e.Start()
	if err := commitLocal(n.b, n.ctx(), "src", 0, []storage.Record{kinded("0", "keep")}); err != nil {
		t.Fatal(err)
	}
	n.waitCursorAt("dst", 1)
	before, _ := n.meta.Topic("dst")
	if _, err := n.e.PatchChild(n.ctx(), "src", "dst", PatchRequest{Envelope: json.RawMessage(`{"format": "sns", "topic_arn": ""}`)}); !errors.Is(err, refusal.ErrInvalid) {
		t.Fatalf("patch with a bad envelope: %v", err)
	}
	if after, _ := n.meta.Topic("dst"); after.Version != before.Version {
		t.Fatal("a refused patch changed the link")
	}
	v, err := n.e.PatchChild(n.ctx(), "src", "dst", PatchRequest{Envelope: testEnvelope})
	if err != nil || v.Envelope == nil || v.Envelope.TopicARN != testARN || v.Filter == nil {
		t.Fatalf("patch to the envelope: %+v %v (the filter must stay)", v, err)
	}
	if err := commitLocal(n.b, n.ctx(), "src", 0, []storage.Record{kinded("1", "keep"), kinded("2", "drop")}); err != nil {
		t.Fatal(err)
	}
	n.waitCursorAt("dst", 3)
	v, err = n.e.PatchChild(n.ctx(), "src", "dst", PatchRequest{Envelope: json.RawMessage(`null`)})
	if err != nil || v.Envelope != nil || v.Filter == nil {
		t.Fatalf("patch to no envelope: %+v %v", v, err)
	}
	if err := commitLocal(n.b, n.ctx(), "src", 0, []storage.Record{kinded("3", "keep")}); err != nil {
		t.Fatal(err)
	}
	n.waitCursorAt("dst", 4)
	got := n.payloads("dst")
	if len(got) != 3 || got[0] != "0:keep" || parseNote(t, []byte(got[1])).Message != "1:keep" || got[2] != "3:keep" {
		t.Fatalf("the child holds %q: want raw, wrapped, raw", got)
	}
}

// A crash between the commit of an enveloped slab and its cursor's
// advance copies the slab again, each copy byte for byte as before: no
// gap, duplicates identical.
func TestEnvelopedLinkCrashRepeatsIdenticalCopies(t *testing.T) {
	f := newFaultNode(t)
	if _, err := f.e.Attach(f.ctx(), "src", AttachRequest{Child: "dst", Envelope: testEnvelope}); err != nil {
		t.Fatal(err)
	}
	child, _ := f.meta.Topic("dst")
	f.e.Start()
	f.waitDurable(t, child.AttachEpoch, 0) // anchored at the attach point
	in := f.fs.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Path: CursorFileName("dst"), Err: syscall.EIO})
	if err := commitLocal(f.b, f.ctx(), "src", 0, []storage.Record{{Payload: []byte("a")}, {Payload: []byte("b")}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the slab committed and its advance failing", func() bool {
		return in.Fired() >= 2 && len(f.read("dst", 0)) == 2
	})
	f.e.Close()
	in.Remove()
	f.e = f.newEngine(f.e.cfg)
	t.Cleanup(f.e.Close)
	f.e.Start()
	f.waitDurable(t, child.AttachEpoch, 2)
	got := f.read("dst", 0)
	if len(got) != 4 {
		t.Fatalf("after the crash the child holds %d records, want the slab twice", len(got))
	}
	for i := range 2 {
		if !bytes.Equal(got[i].Payload, got[i+2].Payload) || parseNote(t, got[i].Payload).Message != []string{"a", "b"}[i] {
			t.Fatalf("copy %d and its repeat differ:\n%s\n%s", i, got[i].Payload, got[i+2].Payload)
		}
	}
}

// The copy path per slab of 4,096 records of 256 bytes with two headers:
// as published (withSourceIDs) and wrapped (withEnvelopes).
func BenchmarkCopyPath(b *testing.B) {
	parent := meta.Topic{Name: "src", Incarnation: 3}
	recs := make([]storage.Record, 4096)
	for i := range recs {
		recs[i] = storage.Record{Offset: uint64(i), CommittedAt: 1796323045123, Key: []byte("k"), Payload: bytes.Repeat([]byte("x"), 256),
			Headers: []header.Header{{Name: "color", Value: "blue"}, {Name: "trace-id", Value: "t1"}}}
	}
	env := &meta.LinkEnvelope{Format: meta.EnvelopeSNS, TopicARN: testARN}
	b.Run("raw", func(b *testing.B) {
		for b.Loop() {
			withSourceIDs(recs, parent, 0)
		}
	})
	b.Run("sns", func(b *testing.B) {
		for b.Loop() {
			withEnvelopes(recs, parent, 0, env)
		}
	})
}
