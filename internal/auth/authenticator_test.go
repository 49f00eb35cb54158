package auth

import (
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/meta"
	"golang.org/x/crypto/bcrypt"
)

// fakeUsers is a users domain in memory with the metastore's versioning:
// every change stamps the record and moves the domain version.
type fakeUsers struct {
	mu      sync.Mutex
	v       uint64
	byName  map[string]meta.User
	lookups int
}

func (f *fakeUsers) put(t *testing.T, name, password string, gs ...meta.Grant) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.v++
	id := f.v
	if old, ok := f.byName[name]; ok {
		id = old.ID
	}
	f.byName[name] = meta.User{Name: name, Hash: h, Grants: gs, ID: id, Version: f.v}
}

// change applies fn to name's record and stamps it, as a metastore write.
func (f *fakeUsers) change(name string, fn func(*meta.User)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.v++
	u := f.byName[name]
	fn(&u)
	u.Version = f.v
	f.byName[name] = u
}

func (f *fakeUsers) remove(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.v++
	delete(f.byName, name)
}

func (f *fakeUsers) User(name string) (meta.User, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups++
	u, ok := f.byName[name]
	return u, ok
}

func (f *fakeUsers) HasUsers() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.byName) > 0
}

func (f *fakeUsers) UsersVersion() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.v
}

func newTestAuth(t *testing.T) (*Authenticator, *fakeUsers, *int) {
	f := &fakeUsers{byName: map[string]meta.User{}}
	failed := 0
	a := NewAuthenticator(f, func() { failed++ })
	a.sleep = func(time.Duration) {}
	return a, f, &failed
}

func TestAuthenticateAndCache(t *testing.T) {
	a, f, failed := newTestAuth(t)
	f.put(t, "alice", "correct horse", g("produce", "orders"))
	p, ok := a.Authenticate("alice", "correct horse", "10.0.0.1")
	if !ok || p.Name != "alice" || len(p.Grants) != 1 {
		t.Fatalf("good pair: %+v %v", p, ok)
	}
	before := f.lookups
	if _, ok := a.Authenticate("alice", "correct horse", "10.0.0.1"); !ok || f.lookups != before {
		t.Fatalf("second good pair: ok=%v, %d lookups (want a cache hit, none)", ok, f.lookups-before)
	}
	for _, c := range []struct{ user, pass string }{{"alice", "wrong"}, {"bob", "correct horse"}, {"", ""}} {
		if _, ok := a.Authenticate(c.user, c.pass, "10.0.0.1"); ok {
			t.Errorf("Authenticate(%q, %q) succeeded", c.user, c.pass)
		}
	}
	if *failed != 3 {
		t.Errorf("%d failures counted, want 3", *failed)
	}
	if len(a.cache) != 1 {
		t.Fatalf("cache holds %d pairs; only the good one may be cached", len(a.cache))
	}

	// Another user's change moves the domain version: the pair is confirmed
	// against alice's unchanged record, without bcrypt, and still works.
	f.put(t, "bob", "bob's password")
	if _, ok := a.Authenticate("alice", "correct horse", "10.0.0.1"); !ok {
		t.Fatal("alice refused after bob was created")
	}
	// alice's own change (a new password) ends the cached pair at once.
	f.put(t, "alice", "battery staple", g("produce", "orders"))
	if _, ok := a.Authenticate("alice", "correct horse", "10.0.0.1"); ok {
		t.Fatal("the old password still works after a password change")
	}
	if _, ok := a.Authenticate("alice", "battery staple", "10.0.0.1"); !ok {
		t.Fatal("the new password is refused")
	}
	// A deleted user's cached pair stops working.
	f.remove("alice")
	if _, ok := a.Authenticate("alice", "battery staple", "10.0.0.1"); ok {
		t.Fatal("a deleted user still authenticates")
	}
}

// A grants change is seen by the next request: the principal carries the
// record's grants at verification, and a change re-verifies.
func TestGrantChangeReachesPrincipal(t *testing.T) {
	a, f, _ := newTestAuth(t)
	f.put(t, "svc", "svc-password", g("produce", "a"))
	a.Authenticate("svc", "svc-password", "s")
	f.put(t, "svc", "svc-password", g("consume", "b"))
	p, ok := a.Authenticate("svc", "svc-password", "s")
	if !ok || len(p.Grants) != 1 || p.Grants[0].Action != "consume" {
		t.Fatalf("after a grants change: %+v %v", p, ok)
	}
}

func TestFailuresSlowASource(t *testing.T) {
	f := newFailures()
	now := time.Unix(1000, 0)
	f.now = func() time.Time { return now }
	var delays []time.Duration
	for range 9 {
		delays = append(delays, f.fail("1.2.3.4"))
	}
	want := []time.Duration{0, 0, 0, 0, 0, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}
	for i := range want {
		if delays[i] != want[i] {
			t.Fatalf("delays %v, want %v", delays, want)
		}
	}
	if d := f.fail("5.6.7.8"); d != 0 {
		t.Fatalf("another source is slowed too: %v", d)
	}
	for range 20 {
		f.fail("1.2.3.4")
	}
	if d := f.fail("1.2.3.4"); d != maxDelay {
		t.Fatalf("delay %v, want the cap %v", d, maxDelay)
	}
	now = now.Add(failureWindow + time.Second)
	if d := f.fail("1.2.3.4"); d != 0 {
		t.Fatalf("after a quiet window: %v, want 0", d)
	}
}

// A cached pair is answered without allocating, whatever its length
// (within the 256-byte password cap): its cache key is hashed on the
// stack.
func TestCacheHitAllocatesNothing(t *testing.T) {
	a, f, _ := newTestAuth(t)
	pass := "a long passphrase of sixty bytes, as password managers make"
	f.put(t, "a-service-account", pass, g("produce", "orders"))
	if _, ok := a.Authenticate("a-service-account", pass, "10.0.0.1"); !ok {
		t.Fatal("good pair refused")
	}
	if n := testing.AllocsPerRun(100, func() { a.Authenticate("a-service-account", pass, "10.0.0.1") }); n != 0 {
		t.Errorf("a cache hit allocates %.0f objects, want none", n)
	}
}
