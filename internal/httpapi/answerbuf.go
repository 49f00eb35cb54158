package httpapi

import (
	"net/http"
	"strconv"
	"sync"
)

// Consume and batch-ack answers are encoded into pooled buffers: a max=100
// consume answer of 256-byte records is ~55 KiB, and a fresh one per
// request was the largest allocation on the consume path (one answer per
// hundred records, each garbage the moment it is written).
//
// Bound: a buffer that grew past maxPooledAnswer is left to the GC, so the
// pool holds at most one 256 KiB buffer per answer being written at once
// (the HTTP server's concurrent consumes), and sync.Pool drops what stays
// unused over two collections. Answers larger than that (max up to 1000,
// up to the broker's consume byte cap) are rare and allocate as before.
const maxPooledAnswer = 256 << 10

var answerPool = sync.Pool{New: func() any {
	b := make([]byte, 0, 4<<10)
	return &b
}}

// answerBuf returns an empty pooled buffer with room for at least size
// bytes (one allocation when the pooled one is smaller).
func answerBuf(size int) *[]byte {
	p := answerPool.Get().(*[]byte)
	if cap(*p) < size {
		*p = make([]byte, 0, size)
	}
	*p = (*p)[:0]
	return p
}

// writeAnswer writes b as a 200 JSON answer with a known length (which
// spares net/http the chunked framing of an answer past its 2 KiB buffer)
// and gives the buffer back: ResponseWriter.Write has copied or sent it
// by the time it returns.
func writeAnswer(w http.ResponseWriter, p *[]byte, b []byte) {
	// Canonical keys set directly: Header.Set canonicalises the key and
	// allocates a value slice on every call (~1% of a per-call consume's
	// server CPU); the Content-Type slice is the shared one (respond.go).
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	if cap(b) <= maxPooledAnswer {
		*p = b[:0]
		answerPool.Put(p)
	}
}
