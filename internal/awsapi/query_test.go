package awsapi

import (
	"net/url"
	"testing"
)

// An empty list comes as its bare name: botocore sends Entries= for a
// batch of none, which is an empty batch, not a malformed one.
func TestFromQueryEmptyList(t *testing.T) {
	for _, name := range []string{"Entries", "AttributeName", "AttributeNames"} {
		p, err := fromQuery(url.Values{"Action": {"DeleteMessageBatch"}, name: {""}})
		if err != nil {
			t.Fatal(err)
		}
		json := name
		if q, ok := queryNames[name]; ok {
			json = q.json
		}
		l, ok := p[json].([]any)
		if !ok || len(l) != 0 {
			t.Errorf("%s=: %s is %#v, want an empty list", name, json, p[json])
		}
	}
	p, err := fromQuery(url.Values{"Entries": {""}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := batchEntries(p); err == nil || err.(*Error).Code != "EmptyBatchRequest" {
		t.Fatalf("an empty batch: %v, want EmptyBatchRequest", err)
	}
}
