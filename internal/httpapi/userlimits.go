package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/auth"
	"github.com/narad-io/narad/internal/meta"
)

// A user's "limits" in a users request: an object of the limits to set,
// by name, each a whole number per second (0: unlimited) or null (none
// of its own: the node's default applies) — a JSON merge patch of the
// user's own limits in PATCH, the user's own limits at create — or null
// for the whole object: none of its own at all. Every refusal names the
// field.

// parseLimits reads a "limits" value; raw is nil when it was absent.
func parseLimits(raw json.RawMessage) (auth.LimitsPatch, bool, error) {
	if raw == nil {
		return auth.LimitsPatch{}, false, nil
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return auth.LimitsPatch{Reset: true}, true, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return auth.LimitsPatch{}, false, apierr.BadRequest("limits: want an object of %s (whole numbers per second, 0: unlimited), or null", strings.Join(meta.LimitNames, ", "))
	}
	p := auth.LimitsPatch{Set: map[string]*int64{}}
	for name, v := range fields {
		if (&meta.Limits{}).Field(name) == nil {
			return auth.LimitsPatch{}, false, apierr.BadRequest("limits.%s is not a limit; the limits are %s", name, strings.Join(meta.LimitNames, ", "))
		}
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			p.Set[name] = nil
			continue
		}
		var n int64
		if err := json.Unmarshal(v, &n); err != nil {
			return auth.LimitsPatch{}, false, apierr.BadRequest("limits.%s %s: want a whole number per second (0: unlimited) or null", name, v)
		}
		if err := meta.CheckRate(name, n); err != nil {
			return auth.LimitsPatch{}, false, apierr.BadRequest("%v", err)
		}
		p.Set[name] = &n
	}
	return p, true, nil
}

// ownLimits is a create's limits: the patch over none.
func ownLimits(p auth.LimitsPatch) *meta.Limits {
	var l meta.Limits
	for name, v := range p.Set {
		*l.Field(name) = v
	}
	if l.Empty() {
		return nil
	}
	return &l
}

// patchUser is PATCH /v1/users/{name}: {"limits": ...} changes the
// user's own rate limits. It is the users record's partial update; only
// limits may change through it today (grants and password have their own
// routes, which say what they replace).
func (s *Server) patchUser(w http.ResponseWriter, r *http.Request, user string) error {
	var req struct {
		Limits json.RawMessage `json:"limits"`
	}
	var patch auth.LimitsPatch
	actor, done, err := s.userWrite(w, r, user, &req, func() error {
		var given bool
		var err error
		if patch, given, err = parseLimits(req.Limits); err != nil {
			return err
		}
		if !given {
			return apierr.BadRequest("nothing to change: give limits")
		}
		return nil
	})
	if done {
		return err
	}
	v, err := s.users.PatchLimits(r.Context(), actor, r.PathValue("name"), patch)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}
