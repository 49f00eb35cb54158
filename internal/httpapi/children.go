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
	// A malformed filter is 400 from the body alone, naming the place in
	// the policy, before forwarding (the engine checks it again).
	if _, _, err := fanout.CheckFilter(req.Filter, req.FilterScope); err != nil {
		return err
	}
	if _, err := fanout.CheckEnvelope(req.Envelope); err != nil {
		return err
	}
	if err := s.allowLink(r, r.PathValue("topic"), req.Child); err != nil {
		return err
	}
	if done, err := s.toLeader(w, r, user, forwardBody(body)); done {
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
	if err := onlyParams(r.URL.Query()); err != nil {
		return err
	}
	if err := s.allowLink(r, r.PathValue("topic"), r.PathValue("child")); err != nil {
		return err
	}
	if done, err := s.toLeader(w, r, user, nil); done {
		return err
	}
	if err := s.fan.Detach(r.Context(), r.PathValue("topic"), r.PathValue("child")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// patchChild sets or removes (null) the filter, the envelope or both of
// the link parent → child; the answer is the link as the children listing
// shows it.
func (s *Server) patchChild(w http.ResponseWriter, r *http.Request, user string) error {
	if err := onlyParams(r.URL.Query()); err != nil {
		return err
	}
	parent, child := r.PathValue("topic"), r.PathValue("child")
	for _, n := range []string{parent, child} {
		if err := broker.ValidateTopicName(n); err != nil {
			return err
		}
	}
	body, err := readBody(r, maxAdminBody, "request body")
	if err != nil {
		return err
	}
	var req fanout.PatchRequest
	if err := decodeStrict(body, &req); err != nil {
		return err
	}
	if _, err := fanout.CheckPatch(req); err != nil {
		return err
	}
	if err := s.allowLink(r, parent, child); err != nil {
		return err
	}
	if done, err := s.toLeader(w, r, user, forwardBody(body)); done {
		return err
	}
	v, err := s.fan.PatchChild(r.Context(), parent, child, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// allowLink checks the right to link or unlink child under parent: both
// must be the caller's to manage (docs/security.md). Names that are not
// topic names are left to the handler's 400.
func (s *Server) allowLink(r *http.Request, parent, child string) error {
	for _, t := range []string{parent, child} {
		if broker.ValidateTopicName(t) != nil {
			return nil
		}
	}
	if err := s.allowManage(r, parent); err != nil {
		return err
	}
	return s.allowManage(r, child)
}
