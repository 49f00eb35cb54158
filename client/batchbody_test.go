package client

import (
	"bytes"
	"encoding/json"
	"testing"

	"pgregory.net/rapid"
)

// TestBatchBodyPlainIsTheEncodersBytes: the hand-written fast path of
// batchBody writes exactly what the reflective encoder writes, for any
// record (most of those rapid draws take the fast path; the others must
// come out the same through the fallback).
func TestBatchBodyPlainIsTheEncodersBytes(t *testing.T) {
	str := rapid.OneOf(rapid.StringMatching(`[ -~]{0,12}`), rapid.String())
	rapid.Check(t, func(t *rapid.T) {
		var r BatchRecord
		if rapid.Bool().Draw(t, "key") {
			k := str.Draw(t, "k")
			r.Key = &k
		}
		if rapid.Bool().Draw(t, "kb") {
			r.KeyBase64 = str.Draw(t, "kb64")
		}
		if rapid.Bool().Draw(t, "part") {
			p := rapid.IntRange(-3, 1<<20).Draw(t, "p")
			r.Partition = &p
		}
		switch rapid.IntRange(0, 3).Draw(t, "payload") {
		case 1:
			s, _ := json.Marshal(str.Draw(t, "ps"))
			r.Payload = s
		case 2:
			r.Payload = json.RawMessage(rapid.SampledFrom([]string{`{"a":1}`, `12`, `"x"`, `[1, 2]`, `true`}).Draw(t, "pj"))
		case 3:
			r.PayloadBase64 = str.Draw(t, "pb")
		}
		if rapid.Bool().Draw(t, "id") {
			r.MsgID = str.Draw(t, "msg")
		}
		switch rapid.IntRange(0, 3).Draw(t, "schedule") {
		case 1:
			r.Delay = str.Draw(t, "delay")
		case 2:
			r.DeliverAt = rapid.Int64().Draw(t, "at")
		case 3:
			r.Delay, r.DeliverAt = str.Draw(t, "delay"), rapid.Int64().Draw(t, "at")
		}
		if rapid.IntRange(0, 4).Draw(t, "headers") == 0 {
			r.Headers = map[string]string{"a": str.Draw(t, "h")}
		}
		recs := []BatchRecord{r, r}
		fast, errFast := batchBody(recs)
		encodeAll = true
		slow, errSlow := batchBody(recs)
		encodeAll = false
		if (errFast == nil) != (errSlow == nil) || !bytes.Equal(fast, slow) {
			t.Fatalf("record %+v:\nfast %s (%v)\nslow %s (%v)", r, fast, errFast, slow, errSlow)
		}
	})
}

func BenchmarkBatchBody(b *testing.B) {
	recs := make([]BatchRecord, 100)
	for i := range recs {
		recs[i] = RecordFromBytes(bytes.Repeat([]byte("x"), 256))
	}
	for _, all := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "encoder"}[all]
		b.Run(name, func(b *testing.B) {
			encodeAll = all
			defer func() { encodeAll = false }()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := batchBody(recs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
