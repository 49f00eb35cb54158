package httpapi

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/narad-io/narad/internal/lease"
)

// FuzzDecodeAckBody is the batch ack body {"receipt_handles": [...]} as
// ackBatch decodes it: a strict decode (unknown fields and trailing data
// refused, with a 400) that never takes what encoding/json would read
// differently, and handles that either parse canonically or are refused
// by lease.ParseHandle — never half-understood.
func FuzzDecodeAckBody(f *testing.F) {
	for _, s := range []string{
		`{"receipt_handles":["0:12:1735689600000000000","3:0:9"]}`,
		`{"receipt_handles":[]}`, `{"receipt_handles":["00:1:2","1:2","a:b:c"]}`,
		`{"receipt_handle":"0:1:2"}`, `{"receipt_handles":["0:1:2"]} []`, ``, `null`,
		`{"receipt_handles":[1,2]}`, `{"receipt_handles":"0:1:2"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		type ackBody struct {
			ReceiptHandles []string `json:"receipt_handles"`
		}
		var strict ackBody
		if err := decodeStrict(body, &strict); err != nil {
			clientErr(t, "ack body", err)
			return
		}
		var lenient ackBody
		if err := json.Unmarshal(body, &lenient); err != nil {
			t.Fatalf("strict decode took a body encoding/json refuses: %v", err)
		}
		if !reflect.DeepEqual(strict, lenient) {
			t.Fatalf("strict %+v, encoding/json %+v", strict, lenient)
		}
		for _, h := range strict.ReceiptHandles {
			p, off, nonce, err := lease.ParseHandle(h)
			if err != nil {
				continue
			}
			if back := lease.FormatHandle(p, off, nonce); back != h {
				t.Fatalf("handle %q parsed as (%d, %d, %d), which formats as %q", h, p, off, nonce, back)
			}
		}
	})
}
