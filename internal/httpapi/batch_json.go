package httpapi

import (
	"fmt"
	"strings"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
)

// decodeJSONBatch reads {"records": [...]} in one pass (jsonScan) and
// refuses what the encoding/json path refused, in its words and order:
//
//  1. the body is not JSON (the first bad byte, or it ends early);
//  2. the envelope does not decode: not an object, an unknown field, a
//     "records" that is not an array (the first in the body);
//  3. trailing data after the object;
//  4. a key of the envelope given twice or in another case;
//  5. no records; more than 10,000 (413);
//  6. the first record that fails its rules, with its index.
//
// On a record's refusal it also returns the records before it, so that
// the handler can let the broker name an earlier index first.
func decodeJSONBatch(body []byte) ([]broker.ProduceRecord, error) {
	if len(body) == 0 {
		return nil, apierr.BadRequest("the request body is empty; a JSON object is required")
	}
	bad := func(why string) error { return apierr.BadRequest("invalid JSON body: %s", why) }
	s := &jsonScan{b: body}
	s.ws()
	if s.i >= len(body) {
		return nil, bad("EOF") // what encoding/json says of a body of whitespace
	}
	var (
		envDec, envKey string
		sawRecords     bool
		d              batchDecoder
	)
	switch c := body[s.i]; c {
	case '{':
		empty, ok := s.open(true)
		if !ok {
			return nil, bad(s.problem)
		}
		if empty {
			break
		}
		for done := false; !done; {
			if body[s.i] != '"' {
				s.failAt(s.i)
				return nil, bad(s.problem)
			}
			start := s.i
			esc, ok := s.str()
			if !ok {
				return nil, bad(s.problem)
			}
			raw := body[start:s.i]
			name := raw[1 : len(raw)-1]
			if esc {
				name = unquote(raw)
			}
			isRecords := string(name) == "records"
			switch {
			case isRecords && sawRecords:
				if envKey == "" {
					envKey = `field "records" is given twice`
				}
			case isRecords:
				sawRecords = true
			case strings.EqualFold(string(unquote(raw)), "records"):
				isRecords = true
				if envKey == "" {
					envKey = fmt.Sprintf("unknown field %q (field names are case-sensitive: did you mean %q?)", unquote(raw), "records")
				}
			default:
				if envDec == "" {
					envDec = fmt.Sprintf("unknown field %q", unquote(raw))
				}
			}
			if !s.colon() {
				return nil, bad(s.problem)
			}
			var ok2 bool
			switch c := body[s.i]; {
			case !isRecords:
				ok2 = s.skip()
			case c == '[':
				ok2 = d.array(s)
			case c == 'n':
				d.reset() // null: no records (the last "records" counts)
				ok2 = s.literal("null")
			default:
				if envDec == "" {
					envDec = fmt.Sprintf("field %q: want an array, got a JSON %s", "records", kindOf(c))
				}
				ok2 = s.skip()
			}
			if !ok2 {
				return nil, bad(s.problem)
			}
			s.ws()
			if s.i >= len(body) {
				return nil, bad(problemEarly)
			}
			switch body[s.i] {
			case ',':
				s.i++
				s.ws()
				if s.i >= len(body) {
					return nil, bad(problemEarly)
				}
			case '}':
				s.i++
				s.depth--
				done = true
			default:
				s.failAt(s.i)
				return nil, bad(s.problem)
			}
		}
	case 'n':
		if !s.literal("null") {
			return nil, bad(s.problem)
		}
	default:
		envDec = "want an object, got a JSON " + kindOf(c)
		if !s.skip() {
			return nil, bad(s.problem)
		}
	}
	if envDec != "" {
		return nil, bad(envDec)
	}
	if s.ws(); s.i < len(body) {
		return nil, bad("trailing data after the object")
	}
	if envKey != "" {
		return nil, bad(envKey)
	}
	return d.result("records is empty")
}

// batchDecoder gathers a batch's records as they are scanned, up to the
// cap: past it records are only counted (and validated), so a body of
// millions of tiny records allocates for 10,000 at most.
type batchDecoder struct {
	recs  []broker.ProduceRecord
	parts []int // the slab of pinned partitions (intSlot)
	n     int   // records seen
	err   error // the first record's refusal
	f     recordFields
}

func (d *batchDecoder) reset() {
	d.recs, d.n, d.err = d.recs[:0], 0, nil
}

// add takes record f, scanned from b, as the next record.
func (d *batchDecoder) add(b []byte) {
	i := d.n
	d.n++
	if d.err != nil || i >= broker.MaxBatchRecords {
		return
	}
	rec, err := d.f.finish(b, i, &d.parts)
	if err != nil {
		d.err = err
		return
	}
	if d.recs == nil {
		d.recs = make([]broker.ProduceRecord, 0, 128)
	}
	d.recs = append(d.recs, rec)
}

// array scans the records array at s.i ('[').
func (d *batchDecoder) array(s *jsonScan) bool {
	d.reset()
	if empty, ok := s.open(false); !ok || empty {
		return ok
	}
	for {
		if s.i >= len(s.b) {
			return s.early()
		}
		if d.err != nil || d.n >= broker.MaxBatchRecords {
			if !s.skip() {
				return false
			}
			d.n++
		} else {
			if !s.record(&d.f) {
				return false
			}
			d.add(s.b)
		}
		s.ws()
		if s.i >= len(s.b) {
			return s.early()
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
		case ']':
			s.i++
			s.depth--
			return true
		default:
			return s.failAt(s.i)
		}
	}
}

// result is the batch, or the refusal that comes first: none (empty),
// over the cap, a record's (with the records before it).
func (d *batchDecoder) result(empty string) ([]broker.ProduceRecord, error) {
	switch {
	case d.n == 0:
		return nil, apierr.BadRequest("%s", empty)
	case d.n > broker.MaxBatchRecords:
		return nil, apierr.TooLarge("batch of %d records is over the cap of %d", d.n, broker.MaxBatchRecords)
	case d.err != nil:
		return d.recs, d.err
	}
	return d.recs, nil
}
