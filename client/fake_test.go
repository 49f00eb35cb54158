package client

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"sync"
	"testing"
)

// seen is one request as the fake server received it.
type seen struct {
	Method      string
	Path        string // escaped, exactly as sent
	Query       url.Values
	Body        string
	ContentType string
}

// reply is what the fake answers.
type reply struct {
	status int
	body   string
	header map[string]string
}

// fake is a one-route-fits-all server that records every request and
// answers from a script, one reply per request (the last one repeats).
type fake struct {
	t       *testing.T
	mu      sync.Mutex
	got     []seen
	auth    []string
	replies []reply
	srv     *httptest.Server
}

func newFake(t *testing.T, replies ...reply) (*Client, *fake) {
	t.Helper()
	f := &fake{t: t, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return New(f.srv.URL, "alice", "pw", nil), f
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	user, pass, _ := r.BasicAuth()
	f.mu.Lock()
	f.got = append(f.got, seen{
		Method:      r.Method,
		Path:        r.URL.EscapedPath(),
		Query:       r.URL.Query(),
		Body:        string(body),
		ContentType: r.Header.Get("Content-Type"),
	})
	f.auth = append(f.auth, user+":"+pass)
	rep := reply{status: http.StatusOK}
	if n := len(f.got); n <= len(f.replies) {
		rep = f.replies[n-1]
	} else if len(f.replies) > 0 {
		rep = f.replies[len(f.replies)-1]
	}
	f.mu.Unlock()
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(rep.status)
	io.WriteString(w, rep.body)
}

// expect checks the requests received, in order, field by field. A nil
// Query in want means "no query parameters at all".
func (f *fake) expect(want ...seen) {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.got) != len(want) {
		f.t.Fatalf("server got %d requests %+v, want %d", len(f.got), f.got, len(want))
	}
	for i := range want {
		g, w := f.got[i], want[i]
		if w.Query == nil {
			w.Query = url.Values{}
		}
		if g.Method != w.Method || g.Path != w.Path || !reflect.DeepEqual(g.Query, w.Query) || g.Body != w.Body {
			f.t.Errorf("request %d:\n got %s %s %v body=%q\nwant %s %s %v body=%q",
				i, g.Method, g.Path, g.Query, g.Body, w.Method, w.Path, w.Query, w.Body)
		}
		if w.ContentType != "" && g.ContentType != w.ContentType {
			f.t.Errorf("request %d: content type %q, want %q", i, g.ContentType, w.ContentType)
		}
		if f.auth[i] != "alice:pw" {
			f.t.Errorf("request %d: basic auth %q, want alice:pw", i, f.auth[i])
		}
	}
}
