package httpapi

import (
	"context"
	"net/http"

	"github.com/narad-io/narad/internal/auth"
)

// AccessKeyAdmin carries out the access-keys API for an authenticated
// actor (auth.Manager): a user's AWS-style keys for the SQS/SNS edge
// (docs/security.md, "Access keys and AWS signatures").
type AccessKeyAdmin interface {
	CreateAccessKey(ctx context.Context, actor auth.Principal, name string) (auth.NewAccessKey, error)
	ListAccessKeys(actor auth.Principal, name string) ([]auth.AccessKeyView, error)
	DeleteAccessKey(ctx context.Context, actor auth.Principal, name, id string) error
}

// accessKeyRoutes turns on the access-keys API, part of the users API,
// when the users API has an access-keys side (m): writes go to the
// leader like every users write, so the key is sealed and proposed
// there; reads are served by any node.
func (s *Server) accessKeyRoutes(m UserAdmin) {
	k, ok := m.(AccessKeyAdmin)
	if !ok {
		return
	}
	s.handle("POST /v1/users/{name}/access-keys", func(w http.ResponseWriter, r *http.Request, user string) error {
		return s.createAccessKey(w, r, user, k)
	})
	s.handle("GET /v1/users/{name}/access-keys", func(w http.ResponseWriter, r *http.Request, user string) error {
		return s.listAccessKeys(w, r, user, k)
	})
	s.handle("DELETE /v1/users/{name}/access-keys/{id}", func(w http.ResponseWriter, r *http.Request, user string) error {
		return s.deleteAccessKey(w, r, user, k)
	})
}

func (s *Server) createAccessKey(w http.ResponseWriter, r *http.Request, user string, k AccessKeyAdmin) error {
	actor, done, err := s.userWrite(w, r, user, nil, nil)
	if done {
		return err
	}
	key, err := k.CreateAccessKey(r.Context(), actor, r.PathValue("name"))
	if err != nil {
		return err
	}
	// The one answer that shows the secret: no cache keeps it.
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, key)
	return nil
}

func (s *Server) listAccessKeys(w http.ResponseWriter, r *http.Request, user string, k AccessKeyAdmin) error {
	actor, err := s.userRead(r, user)
	if err != nil {
		return err
	}
	keys, err := k.ListAccessKeys(actor, r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"access_keys": keys})
	return nil
}

func (s *Server) deleteAccessKey(w http.ResponseWriter, r *http.Request, user string, k AccessKeyAdmin) error {
	actor, done, err := s.userWrite(w, r, user, nil, nil)
	if done {
		return err
	}
	if err := k.DeleteAccessKey(r.Context(), actor, r.PathValue("name"), r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
