package httpapi

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/duration"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
)

// offsetsView answers GET /v1/topics/{topic}/offsets.
type offsetsView struct {
	Topic      string          `json:"topic"`
	TimeMs     int64           `json:"time_ms"`
	Partitions []partitionSeek `json:"partitions"`
}

// partitionSeek is one partition's first offset at or after the time, or
// why it could not be found now (only when every partition was asked: a
// request pinned to one partition answers that partition's error).
type partitionSeek struct {
	Partition int     `json:"partition"`
	Offset    *uint64 `json:"offset,omitempty"`
	Error     string  `json:"error,omitempty"`
}

// offsets is Kafka's offsets-for-times: per partition, the first offset
// whose commit time is at or after time. Each partition answers from its
// owner (forwarded with the time made absolute, so "10m" means the same
// moment everywhere); it reads only the log's segment index, takes no
// lease and needs the consume grant, as replay does.
func (s *Server) offsets(w http.ResponseWriter, r *http.Request, user string) error {
	q := r.URL.Query()
	topic, err := s.messageTopicQuery(r, q, meta.ActionConsume, "time", "partition")
	if err != nil {
		return err
	}
	at, err := parseTime(q, "time", time.Now())
	if err != nil {
		return err
	}
	pinned, err := optInt(q, "partition")
	if err != nil {
		return err
	}
	t, ok := s.b.TopicRecord(topic)
	if !ok {
		return refusal.New(refusal.ErrTopicNotFound, 0, "topic %q does not exist", topic)
	}
	parts := make([]int, 0, t.Partitions)
	if pinned != nil {
		if *pinned >= t.Partitions {
			return refusal.New(refusal.ErrPartitionRange, 0, "partition %d is out of range: %q has %d partitions", *pinned, topic, t.Partitions)
		}
		parts = append(parts, *pinned)
	} else {
		for p := range t.Partitions {
			parts = append(parts, p)
		}
	}
	view := offsetsView{Topic: topic, TimeMs: at.UnixMilli(), Partitions: make([]partitionSeek, 0, len(parts))}
	for _, p := range parts {
		o, err := s.seek(r, user, topic, p, at)
		if err != nil && pinned != nil {
			return err
		}
		ps := partitionSeek{Partition: p}
		if err != nil {
			ps.Error = publicMessage(err)
		} else {
			ps.Offset = &o
		}
		view.Partitions = append(view.Partitions, ps)
	}
	writeJSON(w, http.StatusOK, view)
	return nil
}

// seek finds one partition's offset at at on its owner.
func (s *Server) seek(r *http.Request, user, topic string, p int, at time.Time) (uint64, error) {
	owner := ""
	if s.cluster != nil {
		owner = s.cluster.Owner(topic, p)
	}
	if _, fwd := forwardedUser(r); fwd || owner == "" || owner == s.cluster.Self() {
		return s.b.OffsetAtTime(topic, p, at)
	}
	q := url.Values{"time": {strconv.FormatInt(at.UnixMilli(), 10)}, "partition": {strconv.Itoa(p)}}
	res, err := s.toNode(r.Context(), owner, ForwardRequest{Method: http.MethodGet, Path: r.URL.Path,
		RawQuery: q.Encode(), User: user, Timeout: rpcDefaultTimeout})
	if err != nil {
		return 0, err
	}
	if res.Status != http.StatusOK {
		return 0, forwardedErr(res)
	}
	var v offsetsView
	if err := json.Unmarshal(res.Body, &v); err != nil || len(v.Partitions) != 1 || v.Partitions[0].Offset == nil {
		return 0, apierr.Unavailable(time.Second, "partition %d of %q: its owner %q gave an answer this node cannot read; retry", p, topic, owner)
	}
	return *v.Partitions[0].Offset, nil
}

// parseTime reads a point in time from query parameter name: an RFC 3339
// time, integer Unix milliseconds, or a duration ("10m", "7d") meaning
// that long before now. A time in the future is refused.
func parseTime(q url.Values, name string, now time.Time) (time.Time, error) {
	v := q.Get(name)
	if v == "" {
		return time.Time{}, apierr.BadRequest("%s is required: an RFC 3339 time, Unix milliseconds, or a duration ago like \"10m\"", name)
	}
	var at time.Time
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil && !strings.HasPrefix(v, "+") {
		if ms < 0 {
			return time.Time{}, badParam(name, v, "want Unix milliseconds at or after 0")
		}
		at = time.UnixMilli(ms)
	} else if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		at = t
	} else if d, err := duration.Parse(v); err == nil && d >= 0 {
		at = now.Add(-d)
	} else {
		return time.Time{}, badParam(name, v, `want an RFC 3339 time, Unix milliseconds, or a duration ago like "10m"`)
	}
	if at.After(now.Add(time.Minute)) {
		return time.Time{}, badParam(name, v, "is in the future")
	}
	return at, nil
}

// publicMessage is the sentence a client sees for err (an unexpected
// error's text is the node log's, not the client's).
func publicMessage(err error) string {
	if e, ok := apierr.From(err); ok {
		return e.Message
	}
	return "unexpected error (the node's log has the details)"
}
