package httpapi

import (
	"net/http"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/fanout"
)

func (s *Server) listChildren(w http.ResponseWriter, r *http.Request, user string) error {
	if err := onlyParams(r.URL.Query()); err != nil {
		return err
	}
	v, err := s.fan.Children(r.PathValue("topic"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) attachChild(w http.ResponseWriter, r *http.Request, user string) error {
	if done, err := s.toLeader(w, r, user); done {
		return err
	}
	if err := onlyParams(r.URL.Query()); err != nil {
		return err
	}
	if err := broker.ValidateTopicName(r.PathValue("topic")); err != nil {
		return err
	}
	body, err := readBody(r, maxAdminBody, "request body")
	if err != nil {
		return err
	}
	var req fanout.AttachRequest
	if err := decodeStrict(body, &req); err != nil {
		return err
	}
	v, err := s.fan.Attach(r.Context(), r.PathValue("topic"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) detachChild(w http.ResponseWriter, r *http.Request, user string) error {
	if done, err := s.toLeader(w, r, user); done {
		return err
	}
	if err := onlyParams(r.URL.Query()); err != nil {
		return err
	}
	if err := s.fan.Detach(r.Context(), r.PathValue("topic"), r.PathValue("child")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
