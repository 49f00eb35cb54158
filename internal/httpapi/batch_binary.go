package httpapi

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/header"
)

// The binary batch body (Content-Type application/x-narad-batch), for
// clients that want the cheapest produce: no escaping, no base64, keys
// and payloads as raw bytes, read without a copy.
//
//	body    = magic record...            records until the body ends
//	magic   = "NRDB" 0x01 | "NRDB" 0x02   5 bytes: the format, version 1 or 2
//	record  = flags [partition] [keylen key] [headers] [idlen msgid] paylen payload
//	flags   = 1 byte:
//	          0x01  a key follows (keylen, key); without it the record is keyless
//	          0x02  a partition follows
//	          0x10  (version 2 only) headers follow
//	          0x20  (version 2 only) a msg_id follows (idlen, msgid)
//	headers = count, then count times: namelen name valuelen value
//	          (count, namelen, valuelen: 2 bytes each, unsigned, big-endian;
//	          the record header rules apply, as for a JSON body's "headers")
//	msgid   = the record's producer id, idlen (2 bytes, unsigned,
//	          big-endian) bytes; its rules (1..128 printable ASCII) are a
//	          JSON body's "msg_id"'s, so an empty one is refused, not ignored
//	          0x0c  the payload's encoding, (flags>>2)&3:
//	                0 bytes: stored as given (a JSON body's payload_base64)
//	                1 text: UTF-8, stored as given (a JSON body's string payload)
//	                2 JSON: one JSON value, stored as a JSON body's "payload"
//	                  would store it: its own bytes, a JSON string as its text;
//	                  null is refused
//	          other bits are reserved and must be 0
//	partition, keylen, paylen = 4 bytes each, unsigned, big-endian
//
// Consume shows a payload by what its bytes are (JSON, text, base64), as
// for any record, so a record comes back as the JSON body with the same
// payload would have made it. A partition is unsigned: "negative" cannot
// be said, and one out of range is the broker's refusal as for JSON. The
// caps are a JSON batch's (16 MiB, 10,000 records, 1 MiB payloads, 4 KiB
// keys), and a refusal names the first failing record's index; a record
// cut short by the end of the body is refused at its index, and records
// past the cap are only counted, through their lengths.
//
// Version 2 is version 1 with headers and msg_id: a version-1 body reads
// as it always did (its 0x10 and 0x20 bits stay reserved), and a server
// that knows only version 1 refuses a version-2 body by its magic, before
// any record. A version-2 server from before msg_id refuses a record with
// 0x20 as reserved bits, naming it: an id is never dropped unseen.
const (
	binaryMagic     = "NRDB\x01"
	binaryMagicV2   = "NRDB\x02"
	binFlagKey      = 0x01
	binFlagPart     = 0x02
	binEncMask      = 0x0c
	binEncBytes     = 0 << 2
	binEncText      = 1 << 2
	binEncJSON      = 2 << 2
	binFlagHeaders  = 0x10
	binFlagMsgID    = 0x20
	binFlagsKnown   = binFlagKey | binFlagPart | binEncMask
	binFlagsKnownV2 = binFlagsKnown | binFlagHeaders | binFlagMsgID
)

func decodeBinaryBatch(body []byte) ([]broker.ProduceRecord, error) {
	known := byte(binFlagsKnown)
	switch {
	case len(body) >= len(binaryMagic) && string(body[:len(binaryMagic)]) == binaryMagic:
	case len(body) >= len(binaryMagicV2) && string(body[:len(binaryMagicV2)]) == binaryMagicV2:
		known = binFlagsKnownV2
	default:
		return nil, apierr.BadRequest("an application/x-narad-batch body starts with %q or %q (the format and its version, 1 or 2 with headers); this one does not", binaryMagic, binaryMagicV2)
	}
	var d batchDecoder
	for at := len(binaryMagic); at < len(body); {
		i := d.n
		rec, next, err := binaryRecord(body, at, i, known, d.err != nil || i >= broker.MaxBatchRecords, &d.parts)
		if next < 0 { // cut short: no later record can be found
			if d.n > broker.MaxBatchRecords || d.err != nil {
				break
			}
			return d.recs, err
		}
		at = next
		d.n++
		switch {
		case d.err != nil || i >= broker.MaxBatchRecords:
		case err != nil:
			d.err = err
		default:
			if d.recs == nil {
				d.recs = make([]broker.ProduceRecord, 0, 128)
			}
			d.recs = append(d.recs, rec)
		}
	}
	return d.result("the binary batch body holds no record")
}

// binaryRecord reads record i at body[at:]: the record, where the next
// starts (-1 when this one is cut short, with its refusal), or its
// refusal. With frameOnly it only finds the next record. known is the
// flags the body's version defines.
func binaryRecord(body []byte, at, i int, known byte, frameOnly bool, parts *[]int) (broker.ProduceRecord, int, error) {
	refuse := func(status int, format string, args ...any) error {
		return apierr.New(status, "record %d: "+format, append([]any{i}, args...)...).AtIndex(i)
	}
	short := func(what string, need int) (broker.ProduceRecord, int, error) {
		return broker.ProduceRecord{}, -1, refuse(400, "the body ends inside the record: its %s needs %d bytes, %d are left", what, need, len(body)-at)
	}
	flags := body[at]
	at++
	u32 := func() (int, bool) {
		if len(body)-at < 4 {
			return 0, false
		}
		v := int(binary.BigEndian.Uint32(body[at:]))
		at += 4
		return v, true
	}
	u16 := func() (int, bool) {
		if len(body)-at < 2 {
			return 0, false
		}
		v := int(binary.BigEndian.Uint16(body[at:]))
		at += 2
		return v, true
	}
	var rec broker.ProduceRecord
	part := -1
	if flags&binFlagPart != 0 {
		v, ok := u32()
		if !ok {
			return short("partition", 4)
		}
		part = v
	}
	if flags&binFlagKey != 0 {
		n, ok := u32()
		if !ok {
			return short("key length", 4)
		}
		if len(body)-at < n {
			return short("key", n)
		}
		rec.Key = body[at : at+n : at+n]
		at += n
	}
	hstart, hcount := at, 0
	if flags&binFlagHeaders != 0 && known&binFlagHeaders != 0 {
		c, ok := u16()
		if !ok {
			return short("header count", 2)
		}
		hcount = c
		for h := 0; h < hcount; h++ {
			for _, what := range [2]string{"header name", "header value"} {
				n, ok := u16()
				if !ok {
					return short(what+" length", 2)
				}
				if len(body)-at < n {
					return short(what, n)
				}
				at += n
			}
		}
	}
	hend := at
	var msgID []byte
	if flags&binFlagMsgID != 0 && known&binFlagMsgID != 0 {
		n, ok := u16()
		if !ok {
			return short("msg_id length", 2)
		}
		if len(body)-at < n {
			return short("msg_id", n)
		}
		msgID = body[at : at+n : at+n]
		at += n
	}
	n, ok := u32()
	if !ok {
		return short("payload length", 4)
	}
	if len(body)-at < n {
		return short("payload", n)
	}
	p := body[at : at+n : at+n]
	at += n
	if frameOnly {
		return rec, at, nil
	}
	if flags&^known != 0 {
		also := ""
		if known&binFlagHeaders != 0 {
			also = ", 0x10 headers, 0x20 msg_id"
		}
		if known&binFlagHeaders == 0 && flags&binFlagHeaders != 0 {
			also += "; 0x10 headers needs a version-2 body"
		}
		if known&binFlagMsgID == 0 && flags&binFlagMsgID != 0 {
			also += "; 0x20 msg_id needs a version-2 body"
		}
		return rec, at, refuse(400, "flags 0x%02x set reserved bits 0x%02x (known: 0x01 key, 0x02 partition, 0x0c payload encoding%s)", flags, flags&^known, also)
	}
	if hcount > header.MaxCount {
		return rec, at, refuse(400, "%v: %d headers, at most %d per record", header.ErrInvalid, hcount, header.MaxCount)
	}
	if hcount > 0 {
		rec.Headers = binaryHeaders(body[hstart+2:hend], hcount)
	}
	if flags&binFlagMsgID != 0 {
		// Its rules are the broker's, which refuses with the record's
		// index (as for a JSON body's "msg_id").
		rec.MsgID, rec.HasMsgID = string(msgID), true
	}
	switch flags & binEncMask {
	case binEncBytes:
	case binEncText:
		if !utf8.Valid(p) {
			return rec, at, refuse(400, "payload is flagged text but is not UTF-8 (flag it bytes)")
		}
	case binEncJSON:
		s := jsonScan{b: p}
		s.ws()
		start := s.i
		switch {
		case s.i >= len(p):
			return rec, at, refuse(400, "payload is flagged JSON but is empty")
		case !s.skip():
			return rec, at, refuse(400, "payload is flagged JSON but is not: %s", s.problem)
		}
		raw := p[start:s.i]
		if s.ws(); s.i < len(p) {
			return rec, at, refuse(400, "payload is flagged JSON but has data after its value at byte %d", s.i+1)
		}
		switch {
		case string(raw) == "null":
			return rec, at, refuse(400, "payload is null: give a JSON value, or flag it text or bytes")
		case raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0:
			p = raw[1 : len(raw)-1] // as finish stores a JSON body's string
		case raw[0] == '"':
			p = unquote(raw)
		default:
			p = raw
		}
	default:
		return rec, at, refuse(400, "payload encoding %d is unknown (0 bytes, 1 text, 2 JSON)", (flags&binEncMask)>>2)
	}
	if len(p) > broker.MaxPayloadBytes {
		return rec, at, refuse(413, "payload of %d bytes is over the 1 MiB cap", len(p))
	}
	rec.Payload = p
	if part >= 0 {
		rec.Partition = intSlot(parts, part)
	}
	return rec, at, nil
}

// binaryHeaders reads the count headers of block (their lengths were
// checked by binaryRecord): one string for all their bytes.
func binaryHeaders(block []byte, count int) []header.Header {
	all := string(block)
	hs := make([]header.Header, count)
	at := 0
	for h := range hs {
		var f [2]string
		for j := range f {
			n := int(binary.BigEndian.Uint16(block[at:]))
			f[j] = all[at+2 : at+2+n]
			at += 2 + n
		}
		hs[h] = header.Header{Name: f[0], Value: f[1]}
	}
	return hs
}

// appendBinaryRecord is the encoder's half, for tests and benchmarks here
// (the client has its own): enc is binEncBytes, binEncText or binEncJSON.
func appendBinaryRecord(b []byte, key []byte, hasKey bool, partition *int, enc byte, payload []byte) []byte {
	return appendBinaryRecordHeaders(b, key, hasKey, partition, enc, payload, nil)
}

// appendBinaryRecordHeaders is appendBinaryRecord with headers (a
// version-2 body's records; none: the flag is not set).
func appendBinaryRecordHeaders(b []byte, key []byte, hasKey bool, partition *int, enc byte, payload []byte, hs []header.Header) []byte {
	return appendBinaryRecordV2(b, key, hasKey, partition, enc, payload, hs, nil)
}

// appendBinaryRecordV2 is appendBinaryRecordHeaders with a msg_id (nil:
// none, the flag is not set; empty: the flag with an empty id).
func appendBinaryRecordV2(b []byte, key []byte, hasKey bool, partition *int, enc byte, payload []byte, hs []header.Header, msgID []byte) []byte {
	flags := enc
	if hasKey {
		flags |= binFlagKey
	}
	if partition != nil {
		flags |= binFlagPart
	}
	if len(hs) > 0 {
		flags |= binFlagHeaders
	}
	if msgID != nil {
		flags |= binFlagMsgID
	}
	b = append(b, flags)
	if partition != nil {
		b = binary.BigEndian.AppendUint32(b, uint32(*partition))
	}
	if hasKey {
		b = binary.BigEndian.AppendUint32(b, uint32(len(key)))
		b = append(b, key...)
	}
	if len(hs) > 0 {
		b = binary.BigEndian.AppendUint16(b, uint16(len(hs)))
		for _, h := range hs {
			b = binary.BigEndian.AppendUint16(b, uint16(len(h.Name)))
			b = append(b, h.Name...)
			b = binary.BigEndian.AppendUint16(b, uint16(len(h.Value)))
			b = append(b, h.Value...)
		}
	}
	if msgID != nil {
		b = binary.BigEndian.AppendUint16(b, uint16(len(msgID)))
		b = append(b, msgID...)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(payload)))
	return append(b, payload...)
}
