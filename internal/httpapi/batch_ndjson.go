package httpapi

import (
	"bytes"

	"github.com/narad-io/narad/internal/broker"
)

// decodeNDJSONBatch reads an application/x-ndjson batch: one record object
// per line ("\n", a "\r" before it is dropped), lines of only whitespace
// skipped, each line trimmed of surrounding whitespace (Unicode's, as
// bytes.TrimSpace trims it) and read as a whole JSON document — so a
// line's refusal (bad JSON at a byte of the line, trailing data, every
// rule of a JSON batch's record) names the line's record index. No
// record, or more than 10,000, is refused before any record's rules.
func decodeNDJSONBatch(body []byte) ([]broker.ProduceRecord, error) {
	var d batchDecoder
	var s jsonScan
	for rest := body; len(rest) > 0; {
		var line []byte
		if nl := bytes.IndexByte(rest, '\n'); nl >= 0 {
			line, rest = rest[:nl], rest[nl+1:]
		} else {
			line, rest = rest, nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if d.err != nil || d.n >= broker.MaxBatchRecords {
			d.n++ // past the refusal or the cap: only counted
			continue
		}
		s.b, s.i, s.depth, s.problem = line, 0, 0, ""
		if !s.record(&d.f) {
			d.f = recordFields{decErr: s.problem}
		} else if s.ws(); s.i < len(line) {
			d.f.trailing = true
		}
		d.add(line)
	}
	return d.result("the NDJSON body holds no record")
}
