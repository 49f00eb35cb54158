package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/meta"
)

// RedriveRequest is the body of POST /v1/topics/{topic}/redrive.
type RedriveRequest struct {
	To  string `json:"to"`
	Max *int   `json:"max"`
}

// RedriveAnswer is its answer.
type RedriveAnswer struct {
	Moved int `json:"moved"`
}

// redriveForwardTimeout bounds the redrive another owner runs for us: up
// to 100,000 records produced and settled.
const redriveForwardTimeout = 60 * time.Second

// redrive moves up to max unconsumed records of the path's topic into
// "to" (docs/concepts.md, "Redrive and purge"). It needs consume on the topic
// and produce on to. Each node redrives the partitions it serves: this one
// first, then, in a cluster, each other owner in turn with what is left of
// max.
func (s *Server) redrive(w http.ResponseWriter, r *http.Request, user string) error {
	if err := onlyParams(r.URL.Query()); err != nil {
		return err
	}
	topic := r.PathValue("topic")
	if err := broker.ValidateTopicName(topic); err != nil {
		return err
	}
	body, err := readBody(r, maxAdminBody, "request body")
	if err != nil {
		return err
	}
	var req RedriveRequest
	if err := decodeStrict(body, &req); err != nil {
		return err
	}
	if req.To == "" {
		return apierr.BadRequest(`"to" is required: the topic to move the records into`)
	}
	if err := broker.ValidateTopicName(req.To); err != nil {
		return apierr.BadRequest("to: %s", err.Error())
	}
	max := broker.DefaultRedriveMax
	if req.Max != nil {
		if *req.Max < 1 || *req.Max > broker.MaxRedrive {
			return rangeErr("max", *req.Max, 1, broker.MaxRedrive)
		}
		max = *req.Max
	}
	if err := s.allow(r, meta.ActionConsume, topic); err != nil {
		return err
	}
	if err := s.allow(r, meta.ActionProduce, req.To); err != nil {
		return err
	}
	moved, err := s.b.Redrive(r.Context(), topic, req.To, max)
	if err != nil {
		return err
	}
	if _, fwd := forwardedUser(r); s.cluster != nil && !fwd {
		for _, node := range s.remoteOwners(topic) {
			if moved >= max {
				break
			}
			n, err := s.redriveOn(r, node, user, req.To, max-moved)
			if err != nil {
				return partialRedrive(err, moved, node)
			}
			moved += n
		}
	}
	writeJSON(w, http.StatusOK, RedriveAnswer{Moved: moved})
	return nil
}

// redriveOn asks node to redrive the partitions it serves.
func (s *Server) redriveOn(r *http.Request, node, user, to string, max int) (int, error) {
	body, _ := json.Marshal(RedriveRequest{To: to, Max: &max})
	res, err := s.toNode(r.Context(), node, ForwardRequest{Method: http.MethodPost, Path: r.URL.Path,
		Body: body, ContentType: "application/json", User: user, Timeout: redriveForwardTimeout})
	if err != nil {
		return 0, err
	}
	if res.Status != http.StatusOK {
		return 0, forwardedErr(res)
	}
	var a RedriveAnswer
	if err := json.Unmarshal(res.Body, &a); err != nil {
		return 0, apierr.New(http.StatusBadGateway, "owner %s answered an unreadable redrive", node)
	}
	return a.Moved, nil
}

// partialRedrive words another owner's failure with what was moved before
// it: those records are settled, and a second redrive moves the rest.
func partialRedrive(err error, moved int, node string) error {
	ae, ok := apierr.From(err)
	if !ok {
		ae = apierr.Unavailable(time.Second, "node %s, which serves partitions of this topic, did not answer", node)
	}
	c := *ae
	c.Message = fmt.Sprintf("%s (%d records were moved before it; run the redrive again for the rest)", ae.Message, moved)
	return &c
}
