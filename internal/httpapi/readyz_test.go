package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/narad-io/narad/internal/auth"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
)

// users is a users domain that is empty until a user is added.
type users struct{ has atomic.Bool }

func (u *users) User(string) (meta.User, bool) { return meta.User{}, false }
func (u *users) UsersVersion() uint64          { return 0 }
func (u *users) HasUsers() bool                { return u.has.Load() }

func readyz(t *testing.T, s *Server) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	var body struct{ Reason string }
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("readyz body %q: %v", rec.Body.String(), err)
	}
	return rec.Code, body.Reason
}

// With security on, a node is not ready until the root admin is in its
// replica, whatever else says it is: ready means a client can use it.
func TestReadyzWaitsForTheRootAdmin(t *testing.T) {
	us := &users{}
	nodeReady := func() (bool, string) { return true, "" }
	s := New(nil, nil, metrics.New(), auth.NewAuthenticator(us, nil), nodeReady, slog.New(slog.DiscardHandler), Options{})
	if code, why := readyz(t, s); code != http.StatusServiceUnavailable || !strings.Contains(why, "root admin") {
		t.Fatalf("no users yet: /readyz %d %q, want 503 naming the root admin", code, why)
	}
	us.has.Store(true)
	if code, why := readyz(t, s); code != http.StatusOK {
		t.Fatalf("users present: /readyz %d %q, want 200", code, why)
	}
	// Security off: nothing to wait for.
	open := New(nil, nil, metrics.New(), nil, nodeReady, slog.New(slog.DiscardHandler), Options{})
	if code, why := readyz(t, open); code != http.StatusOK {
		t.Fatalf("security off: /readyz %d %q", code, why)
	}
}
