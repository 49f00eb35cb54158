package httpapi

import (
	"net/http"
	"time"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/history"
)

// historyView is the answer of GET /v1/topics/{topic}/stats/history.
type historyView struct {
	Topic      string           `json:"topic"`
	IntervalMs int64            `json:"interval_ms"`
	WindowMs   int64            `json:"window_ms"`
	Samples    []history.Sample `json:"samples"`
}

// topicHistory answers the topic's samples of the last 15 minutes kept
// by this node (package history), and a last one taken now from
// describe. Authorized like describe (authentication, no grant): it
// shows nothing describe does not, only earlier. A topic this node has
// not sampled yet gets its first sample here, which is also the live one:
// the answer is the ring as it then starts (with the topic's creation
// before it when the node saw that, so a burst since has its rate).
func (s *Server) topicHistory(w http.ResponseWriter, r *http.Request, user string) error {
	if err := onlyParams(r.URL.Query()); err != nil {
		return err
	}
	name := r.PathValue("topic")
	if err := broker.ValidateTopicName(name); err != nil {
		return err
	}
	v, err := s.b.DescribeTopic(name)
	if err != nil {
		return err
	}
	now := time.Now()
	live := history.ReadingOf(v, now)
	pts := []history.Point{live.Point}
	if s.history != nil {
		if pts = s.history.Points(name, v.Incarnation, now); len(pts) == 0 {
			s.history.Record(live)
			pts = s.history.Points(name, v.Incarnation, now)
		} else {
			pts = append(pts, live.Point)
		}
	}
	writeJSON(w, http.StatusOK, historyView{Topic: name, IntervalMs: history.Every.Milliseconds(),
		WindowMs: history.Window.Milliseconds(), Samples: history.Samples(pts)})
	return nil
}
