package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/auth"
	"github.com/narad-io/narad/internal/meta"
)

const maxUserBody = 64 << 10

// userRoutes turns on the users API: m carries it out, users resolves the
// actor of a request forwarded to the leader.
func (s *Server) userRoutes(m UserAdmin, users auth.Users) {
	s.users, s.userStore = m, users
	s.handle("POST /v1/users", s.createUser)
	s.handle("GET /v1/users", s.listUsers)
	s.handle("GET /v1/users/{name}", s.getUser)
	s.handle("PATCH /v1/users/{name}", s.patchUser)
	s.handle("PUT /v1/users/{name}/grants", s.setGrants)
	s.handle("PUT /v1/users/{name}/password", s.setPassword)
	s.handle("DELETE /v1/users/{name}", s.deleteUser)
	s.accessKeyRoutes(m)
}

// actor is who a users request acts as. Users writes run on the leader,
// which re-reads the actor's grants from its own replica — the freshest
// one — when the request was forwarded; with security off the actor is
// the root admin.
func (s *Server) actor(r *http.Request, user string) (auth.Principal, error) {
	if p, ok := principalOf(r); ok {
		return p, nil
	}
	if s.auth == nil {
		return auth.Principal{Name: user, Grants: auth.RootGrants}, nil
	}
	u, ok := s.userStore.User(user)
	if !ok {
		return auth.Principal{}, apierr.New(http.StatusUnauthorized, "user %q no longer exists", user)
	}
	return auth.Principal{Name: u.Name, ID: u.ID, Grants: u.Grants, Limits: u.Limits}, nil
}

// userWrite is the common front of a users write: refuse query
// parameters, decode the body into req (nil: no body) and check it with
// valid (nil: nothing more to check) — both here, so a malformed request
// is this node's 400, never forwarded — then send the request to the
// leader, and there resolve the actor. done means the answer was already
// written (forwarded) or err is to be written.
func (s *Server) userWrite(w http.ResponseWriter, r *http.Request, user string, req any, valid func() error) (actor auth.Principal, done bool, err error) {
	if err := onlyParams(r.URL.Query()); err != nil {
		return actor, true, err
	}
	var body []byte
	if req != nil {
		if body, err = readBody(r, maxUserBody, "request body"); err != nil {
			return actor, true, err
		}
		if err := decodeStrict(body, req); err != nil {
			return actor, true, err
		}
		body = forwardBody(body)
	}
	if valid != nil {
		if err := valid(); err != nil {
			return actor, true, err
		}
	}
	if done, err := s.toLeader(w, r, user, body); done {
		return actor, true, err
	}
	actor, err = s.actor(r, user)
	return actor, err != nil, err
}

// userRead resolves the actor of a users read (served by any node).
func (s *Server) userRead(r *http.Request, user string) (auth.Principal, error) {
	if err := onlyParams(r.URL.Query()); err != nil {
		return auth.Principal{}, err
	}
	return s.actor(r, user)
}

func (s *Server) createUser(w http.ResponseWriter, r *http.Request, user string) error {
	var req struct {
		Username string          `json:"username"`
		Password string          `json:"password"`
		Grants   []meta.Grant    `json:"grants"`
		Limits   json.RawMessage `json:"limits"`
	}
	var limits auth.LimitsPatch
	actor, done, err := s.userWrite(w, r, user, &req, func() error {
		var err error
		limits, _, err = parseLimits(req.Limits)
		return err
	})
	if done {
		return err
	}
	v, err := s.users.Create(r.Context(), actor, req.Username, req.Password, req.Grants, ownLimits(limits))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, v)
	return nil
}

func (s *Server) listUsers(w http.ResponseWriter, r *http.Request, user string) error {
	actor, err := s.userRead(r, user)
	if err != nil {
		return err
	}
	vs, err := s.users.List(actor)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"users": vs})
	return nil
}

func (s *Server) getUser(w http.ResponseWriter, r *http.Request, user string) error {
	actor, err := s.userRead(r, user)
	if err != nil {
		return err
	}
	v, err := s.users.Get(actor, r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) setGrants(w http.ResponseWriter, r *http.Request, user string) error {
	var req struct {
		Grants *[]meta.Grant `json:"grants"`
	}
	actor, done, err := s.userWrite(w, r, user, &req, func() error {
		if req.Grants == nil {
			return apierr.BadRequest("grants is required (an empty list removes every grant)")
		}
		return nil
	})
	if done {
		return err
	}
	v, err := s.users.SetGrants(r.Context(), actor, r.PathValue("name"), *req.Grants)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) setPassword(w http.ResponseWriter, r *http.Request, user string) error {
	var req struct {
		Password        string `json:"password"`
		CurrentPassword string `json:"current_password"`
	}
	actor, done, err := s.userWrite(w, r, user, &req, nil)
	if done {
		return err
	}
	if err := s.users.SetPassword(r.Context(), actor, r.PathValue("name"), req.Password, req.CurrentPassword); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) deleteUser(w http.ResponseWriter, r *http.Request, user string) error {
	actor, done, err := s.userWrite(w, r, user, nil, nil)
	if done {
		return err
	}
	if err := s.users.Delete(r.Context(), actor, r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
