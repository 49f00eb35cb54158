package awsapi

import (
	"net/url"
	"strings"
	"testing"
)

// plainURLPath reads the path url.Parse reads, or declines.
func TestPlainURLPathMatchesURLParse(t *testing.T) {
	for _, raw := range []string{
		"http://localhost:7942/000000000000/q", "https://sqs.example:443/123456789012/orders.fifo",
		"http://h/000000000000/a%2Db", "http://h/000000000000/q?x=1", "http://user@h/0/q", "ftp://h/0/q", "http://h",
		"HTTP://h/0/q", "http://h/0/q#f", `http://h\0/q`,
	} {
		path, ok := plainURLPath(raw)
		if !ok {
			if strings.HasSuffix(raw, "/q") && strings.HasPrefix(raw, "http://localhost") {
				t.Errorf("plainURLPath(%q) declined a queue URL as the edge makes them", raw)
			}
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || u.Path != path {
			t.Errorf("plainURLPath(%q) = %q; url.Parse: %q, %v", raw, path, u.Path, err)
		}
	}
}
