package httpapi

import (
	"io"
	"net/http"
	"net/url"
	"sync"

	"github.com/narad-io/narad/internal/apierr"
)

// Reading bodies and queries without waste: a single produce's body goes
// into a pooled buffer sized by its Content-Length, and a request without
// a query builds no map for it.

// Pooled bodies: buffers start at pooledBodyStart bytes and one that grew
// past maxPooledBody is left to the GC, so the pool holds at most one
// 64 KiB buffer per produce in flight (and sync.Pool empties itself over
// two collections when traffic stops). A body declared larger than
// maxPooledBody is read into its own buffer.
const (
	pooledBodyStart = 4 << 10
	maxPooledBody   = 64 << 10
)

var bodyPool = sync.Pool{New: func() any {
	b := make([]byte, 0, pooledBodyStart)
	return &b
}}

// pooledBody is a body read by readPooled; release gives its buffer back.
type pooledBody struct {
	b    []byte
	from *[]byte // nil: not pooled
}

func (p pooledBody) release() {
	if p.from != nil && cap(p.b) <= maxPooledBody {
		*p.from = p.b[:0]
		bodyPool.Put(p.from)
	}
}

// readPooled is readBody into a pooled buffer. The body is closed once it
// is read to its end, which tells net/http there is nothing left to
// discard before the answer (it would otherwise read it again through an
// io.LimitReader of its own: one allocation per request).
//
// Its bytes are valid until release, so only a handler whose data plane
// copies what it keeps may use it (DataPlane.Produce).
func readPooled(r *http.Request, limit int64, what string) (pooledBody, error) {
	if r.ContentLength > limit {
		return pooledBody{}, apierr.TooLarge("%s of %d bytes is over the cap of %d", what, r.ContentLength, limit)
	}
	if r.ContentLength > maxPooledBody {
		b, err := readBody(r, limit, what)
		return pooledBody{b: b}, err
	}
	from := bodyPool.Get().(*[]byte)
	b, err := readAllInto((*from)[:0], r.Body, limit)
	p := pooledBody{b: b, from: from}
	if err != nil {
		p.release()
		return pooledBody{}, apierr.BadRequest("reading the %s: %v", what, err)
	}
	if int64(len(b)) > limit {
		p.release()
		return pooledBody{}, apierr.TooLarge("%s is over the cap of %d bytes", what, limit)
	}
	r.Body.Close()
	return p, nil
}

// readAllInto appends body to buf until EOF or until more than limit bytes
// are read. A buffer already as large as the body takes no growth: the
// probe for its end is a one-byte read on the stack.
func readAllInto(buf []byte, body io.Reader, limit int64) ([]byte, error) {
	for int64(len(buf)) <= limit {
		if len(buf) == cap(buf) {
			var probe [1]byte
			n, err := body.Read(probe[:])
			buf = append(buf, probe[:n]...) // grows only if the body goes on
			if err != nil {
				return buf, eofIsEnd(err)
			}
			continue
		}
		room := min(cap(buf)-len(buf), int(limit+1)-len(buf))
		n, err := body.Read(buf[len(buf) : len(buf)+room])
		buf = buf[:len(buf)+n]
		if err != nil {
			return buf, eofIsEnd(err)
		}
	}
	return buf, nil // more than limit: the caller refuses it
}

func eofIsEnd(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}

// noQuery is the parsed query of a request that has none; nobody writes
// to it (a handler that edits its query gets its own from r.URL.Query).
var noQuery = url.Values{}

// queryOf is r's query for reading only: without a query string, no map
// is built (r.URL.Query builds one per call, empty or not).
func queryOf(r *http.Request) url.Values {
	if r.URL.RawQuery == "" {
		return noQuery
	}
	return r.URL.Query()
}
