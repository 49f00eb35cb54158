package httpapi

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/header"
)

// One record object of a JSON or NDJSON batch, read by jsonScan in one
// pass with the rules encoding/json plus checkKeys applied before:
//
//	{"key": "c1", "key_base64": "...", "partition": 2,
//	 "payload": <any JSON>, "payload_base64": "...", "msg_id": "...",
//	 "headers": {"a": "b"}, "delay": "90s", "deliver_at": 1764000000000}
//
// and refused in the same words, in the same order: first what the
// decoder refused (a type, an unknown field: the first in the record),
// then trailing data (NDJSON), then what checkKeys refused (a key given
// twice, a name in another case: the first), then the record's rules
// (finish). A payload is kept as a span of the body: a JSON payload is
// stored with its own bytes, a string without escapes as the bytes
// between its quotes — no copy.

// Record fields, as bits.
const (
	fKey = 1 << iota
	fKeyBase64
	fPartition
	fPayload
	fPayloadBase64
	fMsgID
	fHeaders
	fDelay
	fDeliverAt
)

var recordFieldNames = [...]struct {
	name string
	bit  uint16
}{{"key", fKey}, {"key_base64", fKeyBase64}, {"partition", fPartition}, {"payload", fPayload}, {"payload_base64", fPayloadBase64}, {"msg_id", fMsgID}, {"headers", fHeaders}, {"delay", fDelay}, {"deliver_at", fDeliverAt}}

// span is a value's bytes in the scanned buffer.
type span struct{ start, end int }

type recordFields struct {
	has, seen uint16 // fields set (not null), and given
	key, keyB span   // strings, quotes included
	payload   span   // any JSON value
	payloadB  span   // a string, quotes included
	msgID     span   // a string, quotes included
	delay     span   // any JSON value (scheduleValue says which are right)
	deliverAt span   // any JSON value
	partition int
	headers   []header.Header // in body order; the broker checks and sorts them
	headerIdx map[string]int  // headers by name, once there are many
	decErr    string          // the first refusal encoding/json would make
	keyErr    string          // the first refusal checkKeys would make
	trailing  bool            // NDJSON: bytes after the object
}

func (f *recordFields) decodeErr(why string) {
	if f.decErr == "" {
		f.decErr = why
	}
}

// record scans one record value at s.i into f. It returns false on a
// syntax problem (s.problem).
func (s *jsonScan) record(f *recordFields) bool {
	*f = recordFields{}
	switch c := s.b[s.i]; c {
	case '{':
	case 'n':
		return s.skip() // null: a record with no fields
	default:
		f.decodeErr("want an object, got a JSON " + kindOf(c))
		return s.skip()
	}
	if empty, ok := s.open(true); !ok || empty {
		return ok
	}
	for {
		if s.b[s.i] != '"' {
			return s.failAt(s.i)
		}
		start := s.i
		esc, ok := s.str()
		if !ok {
			return false
		}
		bit := f.field(s.b[start:s.i], esc)
		if !s.colon() {
			return false
		}
		if !s.fieldValue(f, bit) {
			return false
		}
		s.ws()
		if s.i >= len(s.b) {
			return s.early()
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
			if s.i >= len(s.b) {
				return s.early()
			}
		case '}':
			s.i++
			s.depth--
			return true
		default:
			return s.failAt(s.i)
		}
	}
}

// field names the record field a key (raw, quotes included) sets, 0 for
// none, noting a refusal the key earns.
func (f *recordFields) field(raw []byte, esc bool) uint16 {
	name := raw[1 : len(raw)-1]
	if esc {
		name = unquote(raw)
	}
	for _, fn := range recordFieldNames {
		if string(name) == fn.name {
			if f.seen&fn.bit != 0 && f.keyErr == "" {
				f.keyErr = fmt.Sprintf("field %q is given twice", fn.name)
			}
			f.seen |= fn.bit
			return fn.bit
		}
	}
	key := string(unquote(raw))
	for _, fn := range recordFieldNames {
		if strings.EqualFold(key, fn.name) {
			// encoding/json takes it for fn.name; checkKeys refuses it.
			if f.keyErr == "" {
				f.keyErr = fmt.Sprintf("unknown field %q (field names are case-sensitive: did you mean %q?)", key, fn.name)
			}
			return fn.bit
		}
	}
	f.decodeErr(fmt.Sprintf("unknown field %q", key))
	return 0
}

func fieldName(bit uint16) string {
	for _, fn := range recordFieldNames {
		if fn.bit == bit {
			return fn.name
		}
	}
	return ""
}

// fieldValue scans the value of the field bit (0: unknown, skipped).
func (s *jsonScan) fieldValue(f *recordFields, bit uint16) bool {
	start, c := s.i, s.b[s.i]
	switch bit {
	case 0:
		return s.skip()
	case fHeaders:
		return s.headersValue(f)
	case fPayload, fDelay, fDeliverAt:
		if !s.skip() {
			return false
		}
		switch bit {
		case fPayload:
			f.payload = span{start, s.i}
		case fDelay:
			f.delay = span{start, s.i}
		default:
			f.deliverAt = span{start, s.i}
		}
		f.has |= bit
		return true
	case fPartition:
		switch {
		case c == 'n':
			f.has &^= fPartition
			return s.literal("null")
		case c == '-' || isDigit(c):
			if !s.number() {
				return false
			}
			n, err := parseInt(s.b[start:s.i])
			if err {
				f.decodeErr(fmt.Sprintf("field %q: want a number, got a JSON number %s", "partition", s.b[start:s.i]))
			}
			f.partition = n
			f.has |= fPartition
			return true
		}
		f.decodeErr(fmt.Sprintf("field %q: want a number, got a JSON %s", "partition", kindOf(c)))
		return s.skip()
	}
	// A string field.
	switch c {
	case 'n':
		f.has &^= bit
		return s.literal("null")
	case '"':
		if _, ok := s.str(); !ok {
			return false
		}
		sp := span{start, s.i}
		switch bit {
		case fKey:
			f.key = sp
		case fKeyBase64:
			f.keyB = sp
		case fMsgID:
			f.msgID = sp
		default:
			f.payloadB = sp
		}
		f.has |= bit
		return true
	}
	f.decodeErr(fmt.Sprintf("field %q: want a string, got a JSON %s", fieldName(bit), kindOf(c)))
	return s.skip()
}

// parseInt is strconv.ParseInt(b, 10, 64) on a JSON number, without the
// string conversion on the common path; err when it is no int64 (a
// fraction, an exponent, out of range), as encoding/json refuses it.
func parseInt(b []byte) (int, bool) {
	if len(b) > 0 && len(b) < 19 {
		neg, d := b[0] == '-', b
		if neg {
			d = d[1:]
		}
		n, ok := 0, len(d) > 0
		for _, c := range d {
			if !isDigit(c) {
				ok = false
				break
			}
			n = n*10 + int(c-'0')
		}
		if ok {
			if neg {
				n = -n
			}
			return n, false
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return int(n), err != nil
}

// The record rules after decoding, in decodeBatchRecord's order and words.
const (
	whyBothPayloads = "give payload or payload_base64, not both"
	whyBadPayload64 = "payload_base64 is not valid base64"
	whyNullPayload  = "payload is null: give a JSON value, or payload_base64"
	whyNoPayload    = "payload or payload_base64 is required"
	whyBothKeys     = "give key or key_base64, not both"
	whyBadKey64     = "key_base64 is not valid base64"
)

// finish applies the record's rules to what record scanned from b: the
// record to produce, or record i's refusal.
func (f *recordFields) finish(b []byte, i int, parts *[]int) (broker.ProduceRecord, error) {
	refuse := func(format string, args ...any) error {
		return apierr.BadRequest("record %d: "+format, append([]any{i}, args...)...).AtIndex(i)
	}
	switch {
	case f.decErr != "":
		return broker.ProduceRecord{}, refuse("invalid JSON body: %s", f.decErr)
	case f.trailing:
		return broker.ProduceRecord{}, refuse("invalid JSON body: trailing data after the object")
	case f.keyErr != "":
		return broker.ProduceRecord{}, refuse("invalid JSON body: %s", f.keyErr)
	case f.has&fPartition != 0 && f.partition < 0:
		return broker.ProduceRecord{}, refuse("partition %d is negative", f.partition)
	}
	var p []byte
	switch {
	case f.has&fPayload != 0 && f.has&fPayloadBase64 != 0:
		return broker.ProduceRecord{}, refuse(whyBothPayloads)
	case f.has&fPayloadBase64 != 0:
		var ok bool
		if p, ok = decodeBase64(unquote(b[f.payloadB.start:f.payloadB.end])); !ok {
			return broker.ProduceRecord{}, refuse(whyBadPayload64)
		}
	case f.has&fPayload != 0:
		raw := b[f.payload.start:f.payload.end]
		switch {
		case string(raw) == "null":
			// Most likely a client's unset field; storing the text "null"
			// would turn it into a record.
			return broker.ProduceRecord{}, refuse(whyNullPayload)
		case raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0:
			// The text between the quotes, invalid UTF-8 included, as the
			// encoding/json path stored it.
			p = raw[1 : len(raw)-1]
		case raw[0] == '"':
			p = unquote(raw)
		default:
			p = raw
		}
	default:
		return broker.ProduceRecord{}, refuse(whyNoPayload)
	}
	if len(p) > broker.MaxPayloadBytes {
		return broker.ProduceRecord{}, apierr.TooLarge("record %d: payload of %d bytes is over the 1 MiB cap", i, len(p)).AtIndex(i)
	}
	rec := broker.ProduceRecord{Payload: p}
	switch {
	case f.has&fKey != 0 && f.has&fKeyBase64 != 0:
		return broker.ProduceRecord{}, refuse(whyBothKeys)
	case f.has&fKeyBase64 != 0:
		k, ok := decodeBase64(unquote(b[f.keyB.start:f.keyB.end]))
		if !ok {
			return broker.ProduceRecord{}, refuse(whyBadKey64)
		}
		rec.Key = k
	case f.has&fKey != 0:
		rec.Key = unquote(b[f.key.start:f.key.end])
	}
	if f.has&fPartition != 0 {
		rec.Partition = intSlot(parts, f.partition)
	}
	if f.has&fMsgID != 0 {
		// Its rules (1..128 printable ASCII) are the broker's, which
		// refuses with the record's index.
		rec.MsgID, rec.HasMsgID = string(unquote(b[f.msgID.start:f.msgID.end])), true
	}
	if f.has&fHeaders != 0 {
		rec.Headers = f.headers
	}
	var delay, at []byte
	if f.has&fDelay != 0 {
		delay = b[f.delay.start:f.delay.end]
	}
	if f.has&fDeliverAt != 0 {
		at = b[f.deliverAt.start:f.deliverAt.end]
	}
	if err := scheduleFields(&rec, delay, at); err != nil {
		return broker.ProduceRecord{}, refuse("%v", err)
	}
	return rec, nil
}

// decodeBase64 is base64.StdEncoding.DecodeString without the string.
func decodeBase64(s []byte) ([]byte, bool) {
	d := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
	n, err := base64.StdEncoding.Decode(d, s)
	return d[:n], err == nil
}

// intSlot stores v in a slab of ints and points at it: one allocation per
// 64 pinned partitions instead of one per record.
func intSlot(slab *[]int, v int) *int {
	if len(*slab) == cap(*slab) {
		*slab = make([]int, 0, 64)
	}
	*slab = append(*slab, v)
	return &(*slab)[len(*slab)-1]
}
