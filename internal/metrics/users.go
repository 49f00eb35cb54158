package metrics

import "github.com/prometheus/client_golang/prometheus"

// ForgetUser drops the series of a deleted user (the rate limit
// counter's), so that users come and go without their series piling up:
// the user label's values are the users that exist and were refused.
func (m *Metrics) ForgetUser(user string) {
	m.RateLimited.DeletePartialMatch(prometheus.Labels{"user": user})
}
