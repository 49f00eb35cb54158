package client

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// FuzzFastMessages holds the one-pass consume answer reader to
// encoding/json: every body it accepts is valid JSON (the client no
// longer validates an accepted body first) and decodes to the very same
// messages (Raw included) through the encoding/json path it stands in
// for.
func FuzzFastMessages(f *testing.F) {
	one := `{"topic":"orders","partition":2,"offset":7,"key":"c42","payload":{"order_id": 1, "s":"a\"}b"},"timestamp":1783615560,"receipt_handle":"2:7:861651","delivery_count":1}`
	for _, s := range []string{
		one, `{"messages":[` + one + `,` + one + `]}`, `{"messages":[]}` + "\n",
		`{"topic":"o","partition":0,"offset":0,"payload":"hi","payload_encoding":"text","timestamp":1}`,
		`{"topic":"o","partition":0,"offset":0,"key_base64":"/w==","payload":[1,2,{"a":[]}],"timestamp":1}`,
		`{"topic":"o","partition":-1,"offset":18446744073709551615,"payload":12.5e3,"timestamp":-3}`,
		`{"topic":"o\u00e9","partition":1.5,"offset":1,"payload":null}`, `{"Topic":"o","payload":true}`,
		`{"topic":"o","topic":"p","payload":false}`, `{"messages":[` + one + `],"more":1}`, `{}`, `[]`,
		`{"topic":"o","partition":0,"offset":0,"payload":1,"timestamp":1,"headers":{"a":"b","trace-id":"é"}}`,
		`{"topic":"o","partition":0,"offset":0,"payload":1,"timestamp":1,"headers":{}}`,
		`{"topic":"o","partition":0,"offset":0,"payload":1,"timestamp":1,"headers":{"a":"b","a":"c"}}`,
		`{"topic":"o","partition":0,"offset":0,"payload":1,"timestamp":1,"headers":{"a":"\n"}}`,
		`{"topic":"o","partition":0,"offset":0,"payload":1,"timestamp":1,"headers":null}`,
		`{"topic":"o","partition":0,"offset":0,"payload":1,"timestamp":1,"headers":{"a":1}}`,
		`{"topic":"o","partition":0,"offset":0,"payload":1,"timestamp":1,"deliver_at":1798135200000}`,
		`{"topic":"o","partition":0,"offset":0,"payload":1,"deliver_at":-1,"deliver_at":"x"}`,
		// Not JSON: each must be declined (the reader is the only check).
		"{\"topic\":\"o\x01\",\"partition\":0,\"offset\":0,\"payload\":1,\"timestamp\":1}",
		"{\"topic\":\"o\",\"partition\":0,\"offset\":0,\"payload\":\"a\tb\",\"timestamp\":1}",
		"{\"topic\":\"\xff\",\"partition\":0,\"offset\":0,\"payload\":1,\"timestamp\":1}",
		`{"topic":"o","partition":01,"offset":0,"payload":1,"timestamp":1}`,
		`{"topic":"o","partition":0,"offset":007,"payload":1,"timestamp":1}`,
		`{"topic":"o","partition":-0,"offset":0,"payload":1,"timestamp":-01}`,
		`{"topic":"o","partition":0,"offset":0,"payload":{"a":tru},"timestamp":1}`,
		`{"topic":"o","partition":0,"offset":0,"payload":"a\qb","timestamp":1}`,
		`{"topic":"o","partition":0,"offset":0,"payload":[1,,2],"timestamp":1}`,
		`{"topic":"o","partition":0,"offset":0,"payload":1.,"timestamp":1}`,
		`{"messages":[{"topic":"o","partition":0,"offset":0,"payload":1,"timestamp":1},]}`,
		`{"payload":"0000`, `{"payload":"0\"`, `{"payload":{"a":"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, ok := fastMessages(body)
		if !ok {
			return
		}
		if !json.Valid(body) {
			t.Fatalf("fast reader took %q, which is not valid JSON", body)
		}
		slow, err := slowMessages(body)
		if err != nil {
			t.Fatalf("fast reader took %q, which encoding/json refuses: %v", body, err)
		}
		if len(fast) != len(slow) || (len(fast) > 0 && !reflect.DeepEqual(fast, slow)) {
			t.Fatalf("%q:\nfast %#v\nslow %#v", body, fast, slow)
		}
	})
}

// TestFastMessagesTakesServerAnswers: the server's own answers (as its
// handler writes them) take the one-pass path, not the fallback.
func TestFastMessagesTakesServerAnswers(t *testing.T) {
	for _, body := range []string{
		`{"topic":"orders","partition":2,"offset":0,"key":"c42","payload":{"order_id": 1},"timestamp":1783615560,"receipt_handle":"2:0:861651","delivery_count":1}` + "\n",
		`{"topic":"orders","partition":2,"offset":0,"id":"w5ftc2tq8cgp1c00000000000fg","payload":1,"timestamp":1,"timestamp_ms":1000}`,
		`{"topic":"t","partition":0,"offset":3,"payload":1,"timestamp":1,"headers":{"a":"b","trace-id":"t1"}}`,
		`{"topic":"t","partition":0,"offset":4,"payload":1,"timestamp":1,"timestamp_ms":1000,"deliver_at":1798135200000,"headers":{"narad-deliver-at":"1798135200000"}}`,
		`{"messages":[{"topic":"t","partition":0,"offset":1,"payload":"x y","payload_encoding":"text","timestamp":1,"receipt_handle":"0:1:2","delivery_count":3},{"topic":"t","partition":1,"offset":9,"key_base64":"/w==","payload":"/w==","payload_encoding":"base64","timestamp":1}]}` + "\n",
	} {
		msgs, ok := fastMessages([]byte(body))
		if !ok {
			t.Errorf("declined %s", body)
		}
		if strings.Contains(body, `"id"`) && (len(msgs) != 1 || msgs[0].ID != "w5ftc2tq8cgp1c00000000000fg") {
			t.Errorf("message id not read from %s: %+v", body, msgs)
		}
	}
}

// benchAnswer is a max=100 consume answer as narad bench gets it: 256
// bytes of text payload per record.
func benchAnswer() []byte {
	b := []byte(`{"messages":[`)
	for i := range 100 {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"topic":"bench-1a2b3c4d","partition":1,"offset":`...)
		b = append(b, []byte(string(rune('1'+i%9)))...)
		b = append(b, `,"payload":"`...)
		for range 256 {
			b = append(b, 'x')
		}
		b = append(b, `","payload_encoding":"text","timestamp":1783615560,"receipt_handle":"1:123456:12345678901234567890","delivery_count":1}`...)
	}
	return append(b, "]}\n"...)
}

// BenchmarkDecodeMessages is the one-pass reader on a max=100 answer;
// BenchmarkDecodeMessagesSlow is the encoding/json path it replaced.
func BenchmarkDecodeMessages(b *testing.B) {
	body := benchAnswer()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeMessages(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeMessagesSlow(b *testing.B) {
	body := benchAnswer()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := slowMessages(body); err != nil {
			b.Fatal(err)
		}
	}
}
