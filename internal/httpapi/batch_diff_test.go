package httpapi

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
)

// The one-pass batch decoders against the encoding/json path they
// replace (batch_oracle_test.go): for any body, the same records, or the
// same refusal — status, sentence, index, and the records before a
// refused one (which the broker judges first).

// scanRecord reads raw as one record document (an NDJSON line) with the
// scanner: record i, or its refusal.
func scanRecord(i int, raw []byte) (broker.ProduceRecord, error) {
	var s jsonScan
	var f recordFields
	var parts []int
	s.b = raw
	s.ws()
	if s.i >= len(raw) {
		return broker.ProduceRecord{}, apierr.BadRequest("record %d: no JSON", i).AtIndex(i)
	}
	if !s.record(&f) {
		f = recordFields{decErr: s.problem}
	} else if s.ws(); s.i < len(raw) {
		f.trailing = true
	}
	return f.finish(raw, i, &parts)
}

// sameOutcome says how two decodes of one body differ ("" when they do
// not).
func sameOutcome(oldRecs []broker.ProduceRecord, oldErr error, newRecs []broker.ProduceRecord, newErr error) string {
	if (oldErr == nil) != (newErr == nil) {
		return fmt.Sprintf("old refusal %v, new %v", oldErr, newErr)
	}
	if oldErr != nil {
		var oe, ne *apierr.Error
		if !errors.As(oldErr, &oe) || !errors.As(newErr, &ne) {
			return fmt.Sprintf("refusals %T %T are not API errors", oldErr, newErr)
		}
		if oe.Status != ne.Status || oe.Message != ne.Message || deref(oe.Index) != deref(ne.Index) {
			return fmt.Sprintf("old refusal %d %q index %v\nnew refusal %d %q index %v", oe.Status, oe.Message, deref(oe.Index), ne.Status, ne.Message, deref(ne.Index))
		}
		if oe.Index == nil {
			return ""
		}
	}
	if !slices.EqualFunc(oldRecs, newRecs, sameRecord) {
		return fmt.Sprintf("old records %s\nnew records %s", showRecs(oldRecs), showRecs(newRecs))
	}
	return ""
}

func showRecs(recs []broker.ProduceRecord) string {
	var b strings.Builder
	for _, r := range recs {
		p := "-"
		if r.Partition != nil {
			p = fmt.Sprint(*r.Partition)
		}
		delay, at := "-", "-"
		if r.Delay != nil {
			delay = r.Delay.String()
		}
		if r.DeliverAt != nil {
			at = fmt.Sprint(*r.DeliverAt)
		}
		fmt.Fprintf(&b, "{key %q nil=%v part %s payload %q msg_id %v %q headers %v delay %s deliver_at %s} ", r.Key, r.Key == nil, p, r.Payload, r.HasMsgID, r.MsgID, r.Headers, delay, at)
	}
	return b.String()
}

// diffSeeds reach every refusal of a JSON batch and the corners of the
// grammar: each is also a test case (TestDecodeBatchMatchesOracle).
var diffSeeds = []string{
	// Accepted.
	`{"records":[{"payload":{"n":1}},{"key":"k","payload":"text"}]}`,
	`{"records":[{"partition":2,"payload_base64":"AAEC"}]}`,
	`{"records":[{"payload":"a\"quoted\" \u00e9 line"}]}`,
	`{"records":[{"payload":  "  padded  "  }]}`,
	" \t\r\n{ \"records\" : [ { \"payload\" : [ 1 , 2 ] , \"key\" : \"\" } ] } \n",
	`{"records":[{"payload":{"a":1,"a":2}}]}`, // the client's own keys: not ours to check
	`{"records":[{"key":"\ud83d\ude00","payload":1e5}]}`,
	`{"records":[{"key":"\ud800x","payload":-0.5E-3}]}`,
	`{"records":[{"key":"\udc00\ud800","payload":true}]}`,
	`{"records":[{"k\u0065y":"a","payload":"\u0000"}]}`,
	`{"records":[{"key_base64":"/w==","payload":"x"}]}`,
	`{"records":[{"key":null,"key_base64":"AA==","partition":null,"payload":"x","payload_base64":null}]}`,
	`{"records":[{"partition":-0,"payload":"x"}]}`,
	// msg_id: a string (escapes decoded), null for none; its rules are the broker's.
	`{"records":[{"payload":"x","msg_id":"order-1"},{"payload":"y","msg_id":null},{"msg_id":"a\u0041\"b","payload":1}]}`,
	`{"records":[{"payload":"x","msg_id":""}]}`,
	`{"records":[{"payload":"x","msg_id":7}]}`,
	`{"records":[{"payload":"x","msg_id":"a","msg_id":"b"}]}`,
	`{"records":[{"payload":"x","Msg_Id":"a"}]}`,
	// delay and deliver_at: strings or numbers, null for none; the range
	// and both-given rules are the broker's.
	`{"records":[{"payload":"x","delay":"90s"},{"payload":"y","delay":1500},{"payload":"z","delay":null}]}`,
	`{"records":[{"payload":"x","deliver_at":"2026-12-24T18:00:00Z"},{"payload":"y","deliver_at":1764000000000},{"payload":"z","deliver_at":"1764000000000"}]}`,
	`{"records":[{"payload":"x","delay":"soon"}]}`,
	`{"records":[{"payload":"x","delay":-5}]}`,
	`{"records":[{"payload":"x","delay":true}]}`,
	`{"records":[{"payload":"x","deliver_at":"tomorrow"}]}`,
	`{"records":[{"payload":"x","deliver_at":{"at":1}}]}`,
	`{"records":[{"payload":"x","delay":"1s","deliver_at":5}]}`,
	`{"records":[{"payload":"x","Delay":"1s"}]}`,
	"{\"records\":[{\"key\":\"\xff\xfe\",\"payload\":\"\xff\"}]}",
	"{\"records\":[{\"payload\":\"\xc3\\n\"}]}",
	`{"records":[{"payload":"x"}],"records":[{"payload":"y"}]}`,
	// Not JSON.
	``, ` `, `{`, `{"records":[`, `{"records":[{"payload":"x"`, `{"records":[{"payload":tru`, `{"records":[{"payload":1.`,
	`{"records":[{"payload":"x"}]`, `{"records":[{"payload":x}]}`, `{"records":[{"payload":01}]}`,
	`{"records":[{"payload":"a` + "\x01" + `"}]}`, `{"records":[{"payload":"\x"}]}`, `{"records":[{"payload":"\u12G4"}]}`,
	`{"records":[{"payload":1,}]}`, `{"records":[{"payload":1},]}`, `{"records" 1}`, `{records:[]}`, `[}`, `{]`,
	`{"records":[{"payload":[` + strings.Repeat("[", 10000) + `]}]}`,
	`{"records":[{"payload":` + strings.Repeat("[", 9997) + strings.Repeat("]", 9997) + `}]}`,
	`{"records":[{"payload":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}]}`,
	`{"records":[{"payload":-}]}`, `{"records":[{"payload":1e}]}`, `{"records":[{"payload":1e+}]}`, `nul`, `-`,
	// The envelope.
	`[]`, `"records"`, `12`, `true`, `null`, `null x`, `{}`, `{"records":null}`, `{"records":[]}`, `{"records":{}}`,
	`{"records":"x"}`, `{"records":1}`, `{"records":false}`, `{"extra":1,"records":[{"payload":1}]}`,
	`{"Records":[{"payload":1}]}`, `{"records":[{"payload":1}],"records":[]}`, `{"records":[{"payload":1}]} {}`,
	`{"records":[{"payload":1}]}]`, `12 {}`, `{"records":[{"payload":1}],"Records":1}`, `{"RECORDS":1,"x":2}`,
	`{"re\u0063ords":[{"payload":1}]}`, `{"records":[{"payload":1}],"r\u00e9cords":1}`,
	// A record.
	`{"records":[{"payload":"ok"},{"payload":1,"payload_base64":"AA=="}]}`,
	`{"records":[{"partition":-1,"payload":1}]}`,
	`{"records":[{"payload":"x","extra":1}]}`,
	`{"records":[{"payload_base64":"not base64!"}]}`,
	`{"records":[{"key_base64":"***","payload":1}]}`,
	`{"records":[{"key":"a","key_base64":"AA==","payload":1}]}`,
	`{"records":[{"payload":null}]}`, `{"records":[{}]}`, `{"records":[null]}`, `{"records":[1]}`, `{"records":[[]]}`,
	`{"records":["x"]}`, `{"records":[true]}`,
	`{"records":[{"Payload":1}]}`, `{"records":[{"payload":1,"payload":2}]}`, `{"records":[{"KEY":"a","zzz":1,"payload":1}]}`,
	`{"records":[{"key":1,"payload":1}]}`, `{"records":[{"key":{},"payload":1}]}`, `{"records":[{"key":[],"payload":1}]}`,
	`{"records":[{"partition":"1","payload":1}]}`, `{"records":[{"partition":1.5,"payload":1}]}`,
	`{"records":[{"partition":1e2,"payload":1}]}`, `{"records":[{"partition":99999999999999999999,"payload":1}]}`,
	`{"records":[{"partition":true,"payload":1}]}`, `{"records":[{"partition":[1],"payload":1}]}`,
	`{"records":[{"partition":-9223372036854775808,"payload":1}]}`, `{"records":[{"partition":9223372036854775807,"payload":1}]}`,
	"{\"records\":[{\"\u212aey\":\"a\",\"payload\":1}]}", // the Kelvin sign folds to k
	`{"records":[{"payload_base64":"","payload":1}]}`, `{"records":[{"payload_base64":1}]}`,
	`{"records":[{"payload":1},{"payload":2},{"payload":3,"partition":-2},{"payload":null}]}`,
	`{"records":[{"payload":1}], "zz":[{"payload":null}]}`,
	`{"records":[{"payload":null}], "records":[{"payload":1}]}`,
	`{"records":[{"payload":"\ud800"}]}`, `{"records":[{"payload":"\\u0041"}]}`,
	`{"records":[{"payload":"` + strings.Repeat("x", broker.MaxPayloadBytes+1) + `"}]}`,
	`{"records":[{"payload_base64":"` + strings.Repeat("A", (broker.MaxPayloadBytes/3+1)*4) + `"}]}`,
	`{"records":[` + strings.Repeat(`{"payload":1},`, broker.MaxBatchRecords) + `{"payload":null}]}`,
	`{"records":[` + strings.Repeat(`{"payload":1},`, broker.MaxBatchRecords-1) + `{"payload":1}]}`,
	`{"records":[` + strings.Repeat(`{},`, broker.MaxBatchRecords) + `{}]}`,
	// Headers.
	`{"records":[{"payload":1,"headers":{"a":"b","trace-id":"\u00e9\n"}}]}`,
	`{"records":[{"payload":1,"headers":{}}]}`, `{"records":[{"payload":1,"headers":null}]}`,
	`{"records":[{"payload":1,"headers":{"a":null}}]}`, `{"records":[{"payload":1,"headers":{"a":1}}]}`,
	`{"records":[{"payload":1,"headers":{"a":1,"b":[],"c":{}}}]}`, `{"records":[{"payload":1,"headers":{"a":true}}]}`,
	`{"records":[{"payload":1,"headers":"x"}]}`, `{"records":[{"payload":1,"headers":[]}]}`, `{"records":[{"payload":1,"headers":7}]}`,
	`{"records":[{"payload":1,"headers":{"a":"x","a":"y"}}]}`, `{"records":[{"payload":1,"headers":{"a":"x","\u0061":"y"}}]}`,
	`{"records":[{"payload":1,"headers":{"a":"x"},"headers":{"b":"y"}}]}`,
	`{"records":[{"payload":1,"Headers":{"a":"x"}}]}`, `{"records":[{"payload":1,"HEADERS":5}]}`,
	`{"records":[{"payload":1,"headers":{"a":"x","a":1}}]}`, `{"records":[{"payload":1,"headers":{"a":1,"a":"x"}}]}`,
	`{"records":[{"payload":1,"headers":{"a":"x",}}]}`, `{"records":[{"payload":1,"headers":{"a"}}]}`,
	`{"records":[{"payload":1,"headers":{"a":"x"`, `{"records":[{"payload":1,"headers":{1:"x"}}]}`,
	"{\"records\":[{\"payload\":1,\"headers\":{\"\xff\":\"\xfe\"}}]}",
	`{"records":[{"payload":1,"headers":{"x":"1"}},{"payload":2,"headers":{"y":{}}}]}`,
	`{"records":[{"payload":1,"headers":{` + manyHeaders(40) + `}}]}`,
	`{"records":[{"payload":1,"headers":{` + manyHeaders(40) + `,"h3":"again"}}]}`,
}

// manyHeaders is n distinct "hN":"v" members of a headers object.
func manyHeaders(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"h%d":"v"`, i)
	}
	return strings.Join(parts, ",")
}

// ndjsonSeeds are NDJSON bodies (every record refusal above applies to a
// line too).
var ndjsonSeeds = []string{
	"{\"payload\":\"one\"}\n{\"key\":\"k\",\"payload\":[1,2]}\n",
	"{\"payload\":\"one\",\"msg_id\":\"m-1\"}\n{\"msg_id\":\"m-1\",\"payload\":2}\n{\"payload\":3,\"msg_id\":[]}\n",
	"{\"payload\":1}\r\n\r\n  \n\t{\"payload\":2}",
	"{\"payload\":1}\n{\"payload\":null}\n{\"payload\":2,\"x\":1}",
	"{\"payload\":1} {\"payload\":2}\n",
	"{\"payload\":1}\n{\"payload\":1,}\n",
	"\n\n \r\n", "", "x", "[1]\n", "null\n", "{\"payload\":1}x\n", "{\"payload\":1} 1\n", "1 {\"payload\":1}",
	"\u00a0{\"payload\":1}\u0085\n", "{\"payload\":1}\v\n", "{\"payload\": \u00a0 1}",
	"{\"Payload\":1} x\n", "{\"payload\":1,\"payload\":2} x\n", "{\"payload\":1,\"x\":2,\"Payload\":3}\n",
	"{\"records\":[{\"payload\":1}]}\n",
	"{\"payload\":1,\"headers\":{\"a\":\"b\"}}\n{\"payload\":2}\n{\"payload\":3,\"headers\":{\"a\":2}}\n",
	strings.Repeat("{\"payload\":1}\n", broker.MaxBatchRecords) + "{\"payload\":null}\n",
	strings.Repeat("{\"payload\":1}\n", broker.MaxBatchRecords) + "\n\n",
	"{\"payload\":" + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + "}",
	"{\"payload\":" + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "}",
}

func checkAgainstOracle(t *testing.T, ndjson bool, body []byte) {
	t.Helper()
	oldRecs, oldErr := oracleBatch(ndjson, body)
	decode := decodeJSONBatch
	if ndjson {
		decode = decodeNDJSONBatch
	}
	newRecs, newErr := decode(body)
	if d := sameOutcome(oldRecs, oldErr, newRecs, newErr); d != "" {
		show := string(body)
		if len(show) > 300 {
			show = show[:300] + "..."
		}
		t.Fatalf("ndjson=%v body %q:\n%s", ndjson, show, d)
	}
}

func TestDecodeBatchMatchesOracle(t *testing.T) {
	for _, s := range diffSeeds {
		checkAgainstOracle(t, false, []byte(s))
		checkAgainstOracle(t, true, []byte(s))
	}
	for _, s := range ndjsonSeeds {
		checkAgainstOracle(t, true, []byte(s))
		checkAgainstOracle(t, false, []byte(s))
	}
}

// FuzzDecodeBatch: whatever the body, the one-pass decoders (JSON and
// NDJSON) decide what the encoding/json path decided.
func FuzzDecodeBatch(f *testing.F) {
	for _, s := range diffSeeds {
		if len(s) < 64<<10 {
			f.Add([]byte(s), false)
		}
	}
	for _, s := range ndjsonSeeds {
		if len(s) < 64<<10 {
			f.Add([]byte(s), true)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, ndjson bool) {
		checkAgainstOracle(t, ndjson, body)
	})
}
