package httpapi

import (
	"net/http"
	"strconv"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/fanout"
	"github.com/narad-io/narad/internal/meta"
)

const maxAdminBody = 1 << 20 // topic bodies carry at most a schema

// LimitCappedHeader is set on a topic listing whose limit was above the
// largest page: its value is the limit served.
const LimitCappedHeader = "Narad-Limit-Capped"

func (s *Server) createTopic(w http.ResponseWriter, r *http.Request, user string) error {
	if err := onlyParams(r.URL.Query()); err != nil {
		return err
	}
	body, err := readBody(r, maxAdminBody, "request body")
	if err != nil {
		return err
	}
	var req broker.CreateTopicRequest
	if err := decodeStrict(body, &req); err != nil {
		return err
	}
	if err := broker.ValidateTopicName(req.Name); err != nil {
		return err
	}
	if err := broker.ValidReplicationFactor(req.ReplicationFactor); err != nil {
		return err
	}
	if err := broker.ValidOrdering(req.Ordering); err != nil {
		return err
	}
	if err := broker.ValidTopicMaps(req.Tags, req.AWSAttributes); err != nil {
		return err
	}
	if err := s.allow(r, meta.ActionCreate, req.Name); err != nil {
		return err
	}
	if req.Parent != "" { // created attached: the parent must be the caller's to manage
		if err := broker.ValidateTopicName(req.Parent); err != nil {
			return err
		}
		if err := fanout.NotOwnParent(req.Name, req.Parent); err != nil {
			return err // malformed: before the right to manage a parent that may not exist
		}
		if err := s.allowManage(r, req.Parent); err != nil {
			return err
		}
	}
	if done, err := s.toLeader(w, r, user, forwardBody(body)); done {
		return err
	}
	create := s.b.CreateTopic
	if req.Parent != "" {
		create = s.fan.CreateChild // create and attach in one command
	}
	t, err := create(r.Context(), req, user)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, t)
	return nil
}

func (s *Server) listTopics(w http.ResponseWriter, r *http.Request, _ string) error {
	q := r.URL.Query()
	if err := onlyParams(q, "limit", "page_token"); err != nil {
		return err
	}
	limit, err := optInt(q, "limit")
	if err != nil {
		return err
	}
	n := 0
	if limit != nil {
		if *limit < 1 {
			return rangeErr("limit", *limit, 1, broker.MaxListLimit)
		}
		n = *limit
		if n > broker.MaxListLimit {
			// Capped, not refused, as the reference does; the header says
			// so, so a client asking for more knows why a page is short.
			n = broker.MaxListLimit
			w.Header().Set(LimitCappedHeader, strconv.Itoa(n))
		}
	}
	topics, next, err := s.b.ListTopics(n, q.Get("page_token"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"topics": topics, "next_page_token": next})
	return nil
}

func (s *Server) describeTopic(w http.ResponseWriter, r *http.Request, user string) error {
	if err := onlyParams(r.URL.Query()); err != nil {
		return err
	}
	t, err := s.b.DescribeTopic(r.PathValue("topic"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

func (s *Server) alterTopic(w http.ResponseWriter, r *http.Request, user string) error {
	if err := onlyParams(r.URL.Query()); err != nil {
		return err
	}
	if err := broker.ValidateTopicName(r.PathValue("topic")); err != nil {
		return err
	}
	if err := s.allowManage(r, r.PathValue("topic")); err != nil {
		return err
	}
	body, err := readBody(r, maxAdminBody, "request body")
	if err != nil {
		return err
	}
	var req broker.AlterTopicRequest // decoded here: a malformed body is this node's 400, never forwarded
	if err := decodeStrict(body, &req); err != nil {
		return err
	}
	if err := broker.ValidReplicationFactor(req.ReplicationFactor); err != nil {
		return err
	}
	if err := broker.ValidOrdering(req.Ordering); err != nil {
		return err
	}
	if err := broker.ValidTopicMaps(req.Tags, req.AWSAttributes); err != nil {
		return err
	}
	if done, err := s.toLeader(w, r, user, forwardBody(body)); done {
		return err
	}
	t, err := s.b.AlterTopic(r.Context(), r.PathValue("topic"), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

func (s *Server) deleteTopic(w http.ResponseWriter, r *http.Request, user string) error {
	if err := onlyParams(r.URL.Query()); err != nil {
		return err
	}
	if err := broker.ValidateTopicName(r.PathValue("topic")); err != nil {
		return err
	}
	if err := s.allowManage(r, r.PathValue("topic")); err != nil {
		return err
	}
	if done, err := s.toLeader(w, r, user, nil); done {
		return err
	}
	if err := s.b.DeleteTopic(r.Context(), r.PathValue("topic")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
