package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/header"
)

// The NDJSON and binary batch bodies refuse what a JSON batch refuses,
// through the handler and a real broker (whose refusals — a partition out
// of range, a key over 4 KiB, an empty payload — name the index too), and
// a Content-Type of no batch format is 415.

// realBatchServer is the API over a real broker with topic "orders" (2
// partitions).
func realBatchServer(t *testing.T) *Server {
	t.Helper()
	return apiOver(realBroker(t, nil, "orders"))
}

type batchCase struct {
	name   string
	body   []byte
	status int
	index  *int
	says   string
}

func runBatchCases(t *testing.T, s *Server, contentType string, cases []batchCase) {
	t.Helper()
	for _, tc := range cases {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v1/topics/orders/produce/batch", bytes.NewReader(tc.body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		s.ServeHTTP(rec, req)
		var got struct {
			Error    string `json:"error"`
			Index    *int   `json:"index"`
			Accepted int    `json:"accepted"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Errorf("%s %s: body %q: %v", contentType, tc.name, rec.Body.String(), err)
			continue
		}
		indexOK := (got.Index == nil) == (tc.index == nil) && (got.Index == nil || *got.Index == *tc.index)
		if rec.Code != tc.status || !indexOK || !strings.Contains(rec.Body.String(), tc.says) {
			t.Errorf("%s %s: %d %.300s; want %d, index %v, mentioning %q", contentType, tc.name, rec.Code, rec.Body.String(), tc.status, deref(tc.index), tc.says)
		}
	}
}

func lines(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }

func TestNDJSONBatchRefusals(t *testing.T) {
	s := realBatchServer(t)
	ok := `{"payload":"a"}`
	bigKey := strings.Repeat("k", broker.MaxKeyBytes+1)
	runBatchCases(t, s, "application/x-ndjson", []batchCase{
		{"accepted", lines(ok, "", `{"key":"k","partition":1,"payload":{"n":1}}`, `{"payload_base64":"AAE="}`), 202, nil, `"accepted":3`},
		{"unknown field", lines(ok, `{"payload":"a","nope":1}`), 400, ptr(1), `record 1: invalid JSON body: unknown field \"nope\"`},
		{"duplicate key", lines(ok, ok, `{"payload":1,"payload":2}`), 400, ptr(2), `record 2: invalid JSON body: field \"payload\" is given twice`},
		{"field in another case", lines(`{"Payload":1}`), 400, ptr(0), `did you mean \"payload\"?`},
		{"payload null", lines(ok, `{"payload":null}`), 400, ptr(1), "record 1: payload is null"},
		{"key and key_base64", lines(`{"key":"a","key_base64":"AA==","payload":1}`), 400, ptr(0), "record 0: give key or key_base64, not both"},
		{"payload and payload_base64", lines(`{"payload":1,"payload_base64":"AA=="}`), 400, ptr(0), "give payload or payload_base64, not both"},
		{"no payload", lines(ok, `{"key":"a"}`), 400, ptr(1), "record 1: payload or payload_base64 is required"},
		{"bad key_base64", lines(`{"key_base64":"*","payload":1}`), 400, ptr(0), "key_base64 is not valid base64"},
		{"bad payload_base64", lines(`{"payload_base64":"*"}`), 400, ptr(0), "payload_base64 is not valid base64"},
		{"negative partition", lines(ok, `{"partition":-1,"payload":1}`), 400, ptr(1), "record 1: partition -1 is negative"},
		{"wrong type", lines(`{"partition":"1","payload":1}`), 400, ptr(0), `field \"partition\": want a number`},
		{"not JSON", lines(ok, `{"payload":1,}`), 400, ptr(1), "record 1: invalid JSON body: malformed JSON at byte 14"},
		{"two objects on a line", lines(`{"payload":1} {"payload":2}`), 400, ptr(0), "trailing data after the object"},
		{"broker: key over 4 KiB", lines(ok, `{"key":"`+bigKey+`","payload":1}`), 400, ptr(1), "record 1: key of 4097 bytes is over the 4 KiB cap"},
		{"broker: partition out of range", lines(ok, `{"partition":2,"payload":1}`), 400, ptr(1), "record 1: partition 2 is out of range"},
		{"broker: an earlier record first", lines(`{"partition":5,"payload":1}`, `{"payload":null}`), 400, ptr(0), "record 0: partition 5 is out of range"},
		{"payload over 1 MiB", lines(ok, `{"payload":"`+strings.Repeat("x", broker.MaxPayloadBytes+1)+`"}`), 413, ptr(1), "record 1: payload of 1048577 bytes is over the 1 MiB cap"},
		{"no record", lines("", "  "), 400, nil, "the NDJSON body holds no record"},
		{"over 10,000 records", bytes.Repeat([]byte(ok+"\n"), broker.MaxBatchRecords+1), 413, nil, "batch of 10001 records is over the cap of 10000"},
		{"over 16 MiB", bytes.Repeat([]byte(ok+"\n"), broker.MaxBatchBodySize/len(ok)), 413, nil, "over the cap of 16777216"},
	})
}

func binBody(recs ...[]byte) []byte {
	return append([]byte(binaryMagic), bytes.Join(recs, nil)...)
}

func binBodyV2(recs ...[]byte) []byte {
	return append([]byte(binaryMagicV2), bytes.Join(recs, nil)...)
}

// binRecH is a version-2 record with headers (keyless when key is "").
func binRecH(key string, enc byte, payload string, hs ...header.Header) []byte {
	return appendBinaryRecordHeaders(nil, []byte(key), key != "", nil, enc, []byte(payload), hs)
}

// binRecID is a version-2 text record "a" with a msg_id (keyless when
// key is "").
func binRecID(key, msgID string, hs ...header.Header) []byte {
	return appendBinaryRecordV2(nil, []byte(key), key != "", nil, binEncText, []byte("a"), hs, []byte(msgID))
}

func manyHeaderList(n int) []header.Header {
	hs := make([]header.Header, n)
	for i := range hs {
		hs[i] = header.Header{Name: fmt.Sprintf("h%d", i), Value: "v"}
	}
	return hs
}

func binRec(key string, hasKey bool, partition *int, enc byte, payload string) []byte {
	return appendBinaryRecord(nil, []byte(key), hasKey, partition, enc, []byte(payload))
}

func TestBinaryBatchRefusals(t *testing.T) {
	s := realBatchServer(t)
	ok := binRec("", false, nil, binEncText, "a")
	bigKey := strings.Repeat("k", broker.MaxKeyBytes+1)
	full := binRec("", false, nil, binEncBytes, "x")
	runBatchCases(t, s, "application/x-narad-batch", []batchCase{
		{"accepted", binBody(ok, binRec("k\xff", true, ptr(1), binEncBytes, "\x00\x01"), binRec("", true, nil, binEncJSON, ` {"n": 1} `)), 202, nil, `"accepted":3`},
		{"no magic", []byte("NRDB\x03" + string(ok)), 400, nil, `starts with \"NRDB\\x01\" or \"NRDB\\x02\"`},
		{"empty body", nil, 400, nil, "starts with"},
		{"no record", binBody(), 400, nil, "the binary batch body holds no record"},
		{"cut short", binBody(ok, ok[:3]), 400, ptr(1), "record 1: the body ends inside the record: its payload length needs 4 bytes, 2 are left"},
		{"payload cut short", binBody(ok, append(binRec("", false, nil, binEncText, "abc"), 0)[:7]), 400, ptr(1), "its payload needs 3 bytes, 2 are left"},
		{"key cut short", binBody(binRec("", true, nil, 0, "")[:3]), 400, ptr(0), "its key length needs 4 bytes"},
		{"reserved flag bits", binBody(ok, append([]byte{0x10}, ok[1:]...)), 400, ptr(1), "record 1: flags 0x10 set reserved bits 0x10 (known: 0x01 key, 0x02 partition, 0x0c payload encoding; 0x10 headers needs a version-2 body)"},
		{"v2: accepted with headers", binBodyV2(ok, binRecH("k", binEncText, "a", header.Header{Name: "a", Value: "b"})), 202, nil, `"accepted":2`},
		{"v1: msg_id needs version 2", binBody(ok, append([]byte{0x20 | binEncText}, ok[1:]...)), 400, ptr(1), "record 1: flags 0x24 set reserved bits 0x20 (known: 0x01 key, 0x02 partition, 0x0c payload encoding; 0x20 msg_id needs a version-2 body)"},
		{"v2: reserved bits", binBodyV2(append([]byte{0x40}, ok[1:]...)), 400, ptr(0), "record 0: flags 0x40 set reserved bits 0x40 (known: 0x01 key, 0x02 partition, 0x0c payload encoding, 0x10 headers, 0x20 msg_id)"},
		{"v2: accepted with msg_id", binBodyV2(ok, binRecID("k", "order-1", header.Header{Name: "a", Value: "b"}), binRecID("", "order-2")), 202, nil, `"accepted":3`},
		{"v2: msg_id length cut short", binBodyV2(ok, []byte{binFlagMsgID, 0}), 400, ptr(1), "record 1: the body ends inside the record: its msg_id length needs 2 bytes, 1 are left"},
		{"v2: msg_id cut short", binBodyV2(binRecID("", "abcdef")[:5]), 400, ptr(0), "record 0: the body ends inside the record: its msg_id needs 6 bytes, 2 are left"},
		{"v2 broker: empty msg_id", binBodyV2(ok, binRecID("", "")), 400, ptr(1), "record 1: invalid header: msg_id is empty"},
		{"v2 broker: msg_id not printable", binBodyV2(ok, ok, binRecID("k", "a\x01b")), 400, ptr(2), "record 2: invalid header: msg_id has byte 0x01 at 1"},
		{"v2 broker: msg_id over 128", binBodyV2(binRecID("", strings.Repeat("m", 129))), 400, ptr(0), "record 0: invalid header: msg_id of 129 bytes, at most 128"},
		{"v2: header count cut short", binBodyV2(ok, []byte{binFlagHeaders, 0}), 400, ptr(1), "record 1: the body ends inside the record: its header count needs 2 bytes, 1 are left"},
		{"v2: header value cut short", binBodyV2(binRecH("", binEncText, "a", header.Header{Name: "n", Value: "vvv"})[:9]), 400, ptr(0), "its header value needs 3 bytes, 1 are left"},
		{"v2: over 64 headers", binBodyV2(ok, binRecH("", binEncText, "a", manyHeaderList(65)...)), 400, ptr(1), "record 1: invalid header: 65 headers, at most 64 per record"},
		{"v2 broker: reserved name", binBodyV2(ok, binRecH("", binEncText, "a", header.Header{Name: "narad-x", Value: "v"})), 400, ptr(1), `record 1: invalid header \"narad-x\": names beginning \"narad-\" are reserved`},
		{"v2 broker: bad name", binBodyV2(binRecH("", binEncText, "a", header.Header{Name: "Up", Value: "v"})), 400, ptr(0), `record 0: invalid header \"Up\"`},
		{"v2 broker: value not UTF-8", binBodyV2(binRecH("", binEncText, "a", header.Header{Name: "b", Value: "\xff"})), 400, ptr(0), `record 0: invalid header \"b\": value is not valid UTF-8`},
		{"unknown encoding", binBody(append([]byte{0x0c}, ok[1:]...)), 400, ptr(0), "payload encoding 3 is unknown"},
		{"text not UTF-8", binBody(ok, binRec("", false, nil, binEncText, "\xff")), 400, ptr(1), "record 1: payload is flagged text but is not UTF-8"},
		{"JSON not JSON", binBody(binRec("", false, nil, binEncJSON, `{"a":}`)), 400, ptr(0), "payload is flagged JSON but is not: malformed JSON at byte 6"},
		{"JSON twice", binBody(binRec("", false, nil, binEncJSON, `1 2`)), 400, ptr(0), "has data after its value"},
		{"JSON empty", binBody(binRec("", false, nil, binEncJSON, ` `)), 400, ptr(0), "payload is flagged JSON but is empty"},
		{"payload null", binBody(ok, binRec("", false, nil, binEncJSON, `null`)), 400, ptr(1), "record 1: payload is null"},
		{"broker: empty payload", binBody(ok, binRec("", false, nil, binEncBytes, "")), 400, ptr(1), "record 1: payload is empty"},
		{"broker: key over 4 KiB", binBody(ok, binRec(bigKey, true, nil, binEncText, "a")), 400, ptr(1), "record 1: key of 4097 bytes is over the 4 KiB cap"},
		{"broker: partition out of range", binBody(ok, binRec("", false, ptr(2), binEncText, "a")), 400, ptr(1), "record 1: partition 2 is out of range"},
		{"broker: an earlier record first", binBody(binRec("", false, ptr(7), binEncText, "a"), binRec("", false, nil, binEncJSON, "null")), 400, ptr(0), "record 0: partition 7 is out of range"},
		{"payload over 1 MiB", binBody(ok, binRec("", false, nil, binEncBytes, strings.Repeat("x", broker.MaxPayloadBytes+1))), 413, ptr(1), "record 1: payload of 1048577 bytes is over the 1 MiB cap"},
		{"over 10,000 records", binBody(bytes.Repeat(ok, broker.MaxBatchRecords+1)), 413, nil, "batch of 10001 records is over the cap of 10000"},
		{"over the cap, then cut short", binBody(bytes.Repeat(ok, broker.MaxBatchRecords+1), ok[:2]), 413, nil, "batch of 10001 records is over the cap of 10000"},
		{"over 16 MiB", binBody(bytes.Repeat(full, broker.MaxBatchBodySize/len(full))), 413, nil, "over the cap of 16777216"},
	})
}

// A Content-Type names the body's format; one that is no batch format is
// 415 before the body is read, and none at all (or curl's -d default) is
// JSON.
func TestBatchContentTypes(t *testing.T) {
	s := realBatchServer(t)
	body := []byte(`{"records":[{"payload":"a"}]}`)
	for _, tc := range []struct {
		ct     string
		status int
		says   string
		index  *int
	}{
		{"", 202, `"accepted":1`, nil},
		{"application/json", 202, `"accepted":1`, nil},
		{"application/json; charset=utf-8", 202, `"accepted":1`, nil},
		{"application/x-www-form-urlencoded", 202, `"accepted":1`, nil},
		{"text/plain", 415, `Content-Type \"text/plain\" is not a batch body`, nil},
		{"application/octet-stream", 415, "application/x-narad-batch", nil},
		{"application/json; charset", 415, "is not a batch body", nil},
		{"application/x-ndjson", 400, "record 0: invalid JSON body: unknown field", ptr(0)},
		{"application/x-narad-batch", 400, "starts with", nil},
	} {
		runBatchCases(t, s, tc.ct, []batchCase{{"content type " + tc.ct, body, tc.status, tc.index, tc.says}})
	}
}

// FuzzDecodeBinaryBatch: any body is a batch or a client's refusal (400
// or 413) — never a panic — and a refusal of one record names it; what is
// accepted is within the caps, a version-1 body has neither headers nor
// msg_id, and re-encoded it reads back the same. (The bytes stored are checked end to end by
// TestBatchFormatsComeBackByteForByte.)
func FuzzDecodeBinaryBatch(f *testing.F) {
	ok := binRec("k", true, ptr(1), binEncText, "a")
	for _, b := range [][]byte{
		binBody(ok), binBody(ok, binRec("", false, nil, binEncJSON, `{"a": [1]}`)), binBody(binRec("", false, nil, binEncJSON, `"s\n"`)),
		binBody(ok[:4]), binBody(), []byte("NRDB"), binBody(append([]byte{0xff}, ok[1:]...)), binBody(binRec("", false, nil, binEncJSON, "null")),
		binBodyV2(ok, binRecH("k", binEncBytes, "x", header.Header{Name: "a", Value: "b"}, header.Header{Name: "c", Value: ""})),
		binBodyV2(binRecH("", binEncText, "x", header.Header{Name: "a", Value: "b"})[:6]), binBodyV2(append([]byte{0x10, 0xff, 0xff}, ok[1:]...)),
		binBodyV2(ok, binRecID("k", "order-1", header.Header{Name: "a", Value: "b"}), binRecID("", "")), binBodyV2(binRecID("", "abc")[:4]),
		binBody(binRecID("", "order-1")), binBodyV2(append([]byte{0x30, 0, 0, 0, 0}, ok[1:]...)),
	} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		recs, err := decodeBinaryBatch(body)
		if err != nil {
			ae := clientErr(t, "binary batch", err)
			if ae.Index != nil && !strings.HasPrefix(ae.Message, fmt.Sprintf("record %d: ", *ae.Index)) {
				t.Fatalf("refusal %q does not name record %d", ae.Message, *ae.Index)
			}
			if ae.Index == nil && len(recs) != 0 {
				t.Fatalf("a refusal of the whole body came with %d records", len(recs))
			}
			return
		}
		if len(recs) == 0 || len(recs) > broker.MaxBatchRecords {
			t.Fatalf("accepted %d records", len(recs))
		}
		for i, r := range recs {
			if len(r.Payload) > broker.MaxPayloadBytes || (r.Partition != nil && *r.Partition < 0) || len(r.Headers) > header.MaxCount {
				t.Fatalf("record %d accepted: payload %d bytes, partition %v, %d headers", i, len(r.Payload), r.Partition, len(r.Headers))
			}
			if (len(r.Headers) > 0 || r.HasMsgID) && body[4] != 2 {
				t.Fatalf("record %d of a version-%d body has headers or a msg_id", i, body[4])
			}
		}
		// What was read, written again as a version-2 body (payloads as
		// bytes), reads back the same: the encoder and the decoder agree
		// on every field, msg_id included.
		again := []byte(binaryMagicV2)
		for _, r := range recs {
			var id []byte
			if r.HasMsgID {
				id = []byte(r.MsgID)
			}
			again = appendBinaryRecordV2(again, r.Key, r.Key != nil, r.Partition, binEncBytes, r.Payload, r.Headers, id)
		}
		back, err := decodeBinaryBatch(again)
		if err != nil || !slices.EqualFunc(recs, back, sameRecord) {
			t.Fatalf("re-encoded body reads back %s (%v), want %s", showRecs(back), err, showRecs(recs))
		}
	})
}
