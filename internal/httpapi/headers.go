package httpapi

import (
	"net/http"
	"strings"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/header"
)

// headerPrefix starts the request headers a single produce turns into
// record headers (docs/concepts.md, "Records"): Narad-Header-Trace-Id: x is
// the record header trace-id: x.
const headerPrefix = "Narad-Header-"

// requestHeaders reads a single produce's record headers. It allocates
// nothing for a request without any, and two slices for one with some
// (the list, and one string holding every lower-cased name). A request
// header given twice is refused rather than joined: a value may hold
// commas, so joining would change it. The rules themselves (names,
// sizes, narad-) are the broker's, which names the offending header.
func requestHeaders(r *http.Request) ([]header.Header, error) {
	n, names := 0, 0
	for k := range r.Header {
		if isRecordHeader(k) {
			n++
			names += len(k) - len(headerPrefix)
		}
	}
	if n == 0 {
		return nil, nil
	}
	if n > header.MaxCount { // refuse before copying a flood
		return nil, apierr.BadRequest("%v: more than %d Narad-Header-* request headers (%d)", header.ErrInvalid, header.MaxCount, n)
	}
	// One pass (two ranges over a map need not meet its keys in the same
	// order): the names go into one buffer, the values into the list, and
	// the names are cut from the buffer's one string afterwards.
	lower := make([]byte, 0, names)
	var ends [header.MaxCount]int
	hs := make([]header.Header, 0, n)
	for k, vs := range r.Header {
		if !isRecordHeader(k) {
			continue
		}
		if len(vs) > 1 {
			return nil, apierr.BadRequest("%v %q: given twice (as request header %s)", header.ErrInvalid, strings.ToLower(k[len(headerPrefix):]), k)
		}
		lower = appendLower(lower, k[len(headerPrefix):])
		ends[len(hs)] = len(lower)
		hs = append(hs, header.Header{Value: vs[0]})
	}
	all := string(lower)
	for i, at := 0, 0; i < len(hs); i++ {
		hs[i].Name = all[at:ends[i]]
		at = ends[i]
	}
	return hs, nil
}

func isRecordHeader(k string) bool {
	return len(k) >= len(headerPrefix) && strings.EqualFold(k[:len(headerPrefix)], headerPrefix)
}

// appendLower appends s in ASCII lower case (a name with other bytes is
// refused by the broker's rules, which name it as it came).
func appendLower(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}
