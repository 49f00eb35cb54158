package httpapi

import (
	"net/http"
	"strings"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/header"
)

// headerPrefix starts the request headers a single produce turns into
// record headers (09-extensions.md): Narad-Header-Trace-Id: x is the
// record header trace-id: x.
const headerPrefix = "Narad-Header-"

// requestHeaders reads a single produce's record headers. It allocates
// nothing for a request without any. A request header given twice is
// refused rather than joined: a value may hold commas, so joining would
// change it. The rules themselves (names, sizes, narad-) are the
// broker's, which names the offending header.
func requestHeaders(r *http.Request) ([]header.Header, error) {
	var hs []header.Header
	for k, vs := range r.Header {
		if len(k) < len(headerPrefix) || !strings.EqualFold(k[:len(headerPrefix)], headerPrefix) {
			continue
		}
		name := strings.ToLower(k[len(headerPrefix):])
		if len(vs) > 1 {
			return nil, apierr.BadRequest("%v %q: given twice (as request header %s)", header.ErrInvalid, name, k)
		}
		if len(hs) == header.MaxCount { // refuse before collecting a flood
			return nil, apierr.BadRequest("%v %q: more than %d Narad-Header-* request headers", header.ErrInvalid, name, header.MaxCount)
		}
		hs = append(hs, header.Header{Name: name, Value: vs[0]})
	}
	return hs, nil
}
