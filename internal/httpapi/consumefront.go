package httpapi

import (
	"net/http"
	"net/url"

	"github.com/narad-io/narad/internal/broker"
)

// messageTopicQuery is messageTopic over a query the handler parsed
// already: the consume and ack handlers read their parameters from the
// same url.Values, and each r.URL.Query() parses the raw query anew (a
// second parse was 5% of a per-call consume's server CPU). The checks and
// their order are messageTopic's.
func (s *Server) messageTopicQuery(r *http.Request, q url.Values, action string, params ...string) (string, error) {
	if err := onlyParams(q, params...); err != nil {
		return "", err
	}
	topic := r.PathValue("topic")
	if err := broker.ValidateTopicName(topic); err != nil {
		return "", err
	}
	return topic, s.allow(r, action, topic)
}
