package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A refused batch produce names the refused record in a structured field
// beside the message ({"error": "record 2: ...", "index": 2}), whether the
// HTTP decoder or the broker's validation refused it, so a client (a
// remote child's sender) need not parse the text. Refusals that are not
// about one record carry no index; the message is as before.
func TestBatchRefusalNamesTheIndex(t *testing.T) {
	s := apiOver(realBroker(t, nil, "orders"))
	for _, tc := range []struct {
		name, topic, body string
		status            int
		index             *int
		says              string
	}{
		{"decoder: negative partition", "orders", `{"records":[{"payload":"a"},{"payload":"b"},{"payload":"c","partition":-1}]}`,
			400, ptr(2), "record 2: partition -1 is negative"},
		{"decoder: unknown field", "orders", `{"records":[{"payload":"a","nope":1}]}`, 400, ptr(0), "record 0:"},
		{"broker: partition out of range", "orders", `{"records":[{"payload":"a"},{"payload":"b","partition":5}]}`,
			400, ptr(1), "record 1: partition 5 is out of range"},
		{"not about a record: no topic", "missing", `{"records":[{"payload":"a"}]}`, 404, nil, "does not exist"},
		{"not about a record: empty batch", "orders", `{"records":[]}`, 400, nil, "records is empty"},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v1/topics/"+tc.topic+"/produce/batch", strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		s.ServeHTTP(rec, req)
		var got struct {
			Error string `json:"error"`
			Index *int   `json:"index"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("%s: body %q: %v", tc.name, rec.Body.String(), err)
		}
		indexOK := (got.Index == nil) == (tc.index == nil) && (got.Index == nil || *got.Index == *tc.index)
		if rec.Code != tc.status || !indexOK || !strings.Contains(got.Error, tc.says) {
			t.Errorf("%s: %d %s; want %d, index %v, mentioning %q", tc.name, rec.Code, rec.Body.String(), tc.status, deref(tc.index), tc.says)
		}
	}
}

func ptr(i int) *int { return &i }

func deref(p *int) any {
	if p == nil {
		return "none"
	}
	return *p
}
