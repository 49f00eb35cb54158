package httpapi

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
)

// PurgeResult is a purge's answer: how many records this call settled
// that were not settled before (0 for a second purge: it is idempotent).
type PurgeResult struct {
	Purged uint64 `json:"purged"`
}

// purgeTopic is POST /v1/topics/{topic}/purge (docs/concepts.md, "Redrive and
// purge"): every record below each partition's high watermark at the moment
// of the call is settled. It needs the right to manage the topic (owner or
// admin). With ?partition=P only that partition is purged (by its owner: the
// request is forwarded there); without, this node purges the partitions it
// owns and asks each other owner for each of its partitions, in partition
// order. A partition that fails answers its error as it is; the partitions
// already purged stay purged, and since a purge is idempotent the client
// simply retries.
func (s *Server) purgeTopic(w http.ResponseWriter, r *http.Request, user string) error {
	q := r.URL.Query()
	if err := onlyParams(q, "partition"); err != nil {
		return err
	}
	topic := r.PathValue("topic")
	if err := broker.ValidateTopicName(topic); err != nil {
		return err
	}
	part, err := optInt(q, "partition")
	if err != nil {
		return err
	}
	if err := s.allowManage(r, topic); err != nil {
		return err
	}
	body, err := readBody(r, maxAdminBody, "request body")
	if err != nil {
		return err
	}
	if len(body) > 0 { // none is needed; {} is accepted, anything else refused
		if err := decodeStrict(body, &struct{}{}); err != nil {
			return err
		}
	}
	if part != nil {
		if done, err := s.toOwner(w, r, user, topic, *part, 0); done {
			return err
		}
		n, err := s.b.Purge(r.Context(), topic, []int{*part})
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, PurgeResult{Purged: n})
		return nil
	}
	t, known := s.b.TopicRecord(topic)
	if s.cluster == nil || !known {
		n, err := s.b.Purge(r.Context(), topic, nil) // an unknown topic: its 404
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, PurgeResult{Purged: n})
		return nil
	}
	local := []int{}
	var remote []int
	for p := range t.Partitions {
		if o := s.cluster.Owner(topic, p); o == "" || o == s.cluster.Self() {
			local = append(local, p)
		} else {
			remote = append(remote, p)
		}
	}
	n, err := s.b.Purge(r.Context(), topic, local)
	if err != nil {
		return err
	}
	for _, p := range remote {
		res, err := s.toNode(r.Context(), s.cluster.Owner(topic, p), ForwardRequest{Method: http.MethodPost, Path: r.URL.Path,
			RawQuery: url.Values{"partition": {strconv.Itoa(p)}}.Encode(), User: user, Timeout: rpcDefaultTimeout})
		if err != nil {
			return err
		}
		if res.Status != http.StatusOK {
			writeForwarded(w, res)
			return nil
		}
		var got PurgeResult
		if err := json.Unmarshal(res.Body, &got); err != nil {
			return apierr.Unavailable(0, "the owner of partition %d of %q answered its purge with an unreadable body", p, topic)
		}
		n += got.Purged
	}
	writeJSON(w, http.StatusOK, PurgeResult{Purged: n})
	return nil
}
