package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/narad-io/narad/internal/auth"
	"github.com/narad-io/narad/internal/refusal"
)

// The fake users domain's access-keys side.

func (f *fakeUsers) CreateAccessKey(_ context.Context, actor auth.Principal, name string) (auth.NewAccessKey, error) {
	err := f.note(true, "CreateAccessKey", "%s by=%s", name, actor.Name)
	return auth.NewAccessKey{AccessKeyID: "NKIAJ7Q3XW2LM4ZR5T6Y", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", CreatedAt: 1700000000}, err
}

func (f *fakeUsers) ListAccessKeys(actor auth.Principal, name string) ([]auth.AccessKeyView, error) {
	err := f.note(false, "ListAccessKeys", "%s by=%s", name, actor.Name)
	return []auth.AccessKeyView{{AccessKeyID: "NKIAJ7Q3XW2LM4ZR5T6Y", CreatedAt: 1700000000}}, err
}

func (f *fakeUsers) DeleteAccessKey(_ context.Context, actor auth.Principal, name, id string) error {
	return f.note(true, "DeleteAccessKey", "%s %s by=%s", name, id, actor.Name)
}

func TestAccessKeyRoutes(t *testing.T) {
	e := newEnv(t, secured)
	w := e.do(request{method: "POST", target: "/v1/users/alice/access-keys", user: "alice"})
	if w.Code != http.StatusCreated || w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("create: %d %q %s", w.Code, w.Header().Get("Cache-Control"), w.Body)
	}
	var k struct {
		ID        string `json:"access_key_id"`
		Secret    string `json:"secret_access_key"`
		CreatedAt int64  `json:"created_at"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &k); err != nil || k.ID == "" || k.Secret == "" || k.CreatedAt != 1700000000 {
		t.Fatalf("create answered %s (%v)", w.Body, err)
	}
	if got := e.rec.last("CreateAccessKey"); got != "CreateAccessKey alice by=alice" {
		t.Fatalf("called %q", got)
	}

	w = e.do(request{method: "GET", target: "/v1/users/alice/access-keys", user: "root"})
	if w.Code != http.StatusOK || w.Body.String() != `{"access_keys":[{"access_key_id":"NKIAJ7Q3XW2LM4ZR5T6Y","created_at":1700000000}]}`+"\n" {
		t.Fatalf("list: %d %s", w.Code, w.Body)
	}
	w = e.do(request{method: "DELETE", target: "/v1/users/alice/access-keys/NKIAJ7Q3XW2LM4ZR5T6Y", user: "alice"})
	if w.Code != http.StatusNoContent || e.rec.last("DeleteAccessKey") != "DeleteAccessKey alice NKIAJ7Q3XW2LM4ZR5T6Y by=alice" {
		t.Fatalf("delete: %d %s %q", w.Code, w.Body, e.rec.last("DeleteAccessKey"))
	}

	for _, c := range []struct {
		name   string
		r      request
		fail   string
		err    error
		status int
	}{
		{"no credentials", request{method: "POST", target: "/v1/users/alice/access-keys"}, "", nil, http.StatusUnauthorized},
		{"a query parameter", request{method: "GET", target: "/v1/users/alice/access-keys?x=1", user: "alice"}, "", nil, http.StatusBadRequest},
		{"a third key", request{method: "POST", target: "/v1/users/alice/access-keys", user: "alice"}, "CreateAccessKey",
			refusal.New(refusal.ErrConflict, 0, "user \"alice\" holds 2 access keys already"), http.StatusConflict},
		{"another's keys", request{method: "GET", target: "/v1/users/bob/access-keys", user: "alice"}, "ListAccessKeys",
			refusal.New(refusal.ErrForbidden, 0, "managing users needs an admin grant"), http.StatusForbidden},
		{"an unknown key", request{method: "DELETE", target: "/v1/users/alice/access-keys/NKIAAAAAAAAAAAAAAAAA", user: "alice"}, "DeleteAccessKey",
			refusal.New(refusal.ErrNotFound, 0, "user \"alice\" has no access key"), http.StatusNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, secured)
			if c.fail != "" {
				e.rec.failWith(c.fail, c.err)
			}
			w := e.do(c.r)
			if w.Code != c.status {
				t.Fatalf("%d %s, want %d", w.Code, w.Body, c.status)
			}
			errorBody(t, w)
		})
	}
}

// A users API without an access-keys side serves no access-key routes.
func TestAccessKeyRoutesWithoutKeys(t *testing.T) {
	e := newEnv(t, secured, func(e *env) { e.opts.Users = plainUsers{e.users} })
	w := e.do(request{method: "GET", target: "/v1/users/alice/access-keys", user: "alice"})
	if w.Code != http.StatusNotFound {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	errorBody(t, w)
}

// plainUsers is a UserAdmin with no access-keys methods.
type plainUsers struct{ UserAdmin }
