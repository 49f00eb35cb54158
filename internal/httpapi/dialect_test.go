package httpapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
)

// A limit above the largest page is capped, not refused, as the reference
// does, and the answer says so in a header; a limit within the range has
// no such header.
func TestListLimitAboveTheMaximumIsCapped(t *testing.T) {
	for _, tc := range []struct {
		target, capped string
	}{
		{"/v1/topics?limit=1001", "1000"},
		{"/v1/topics?limit=5000000", "1000"},
		{"/v1/topics?limit=1000", ""},
		{"/v1/topics", ""},
	} {
		e := newEnv(t)
		w := e.do(request{method: "GET", target: tc.target})
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", tc.target, w.Code, w.Body.String())
		}
		if got := w.Header().Get(LimitCappedHeader); got != tc.capped {
			t.Errorf("%s: %s %q, want %q", tc.target, LimitCappedHeader, got, tc.capped)
		}
	}
}

// The attach answer is the parent's record, as the reference answers it,
// with the new link's child, attach_epoch and attach_offsets at the top
// level (docs/http-api.md).
func TestAttachAnswersWithTheParentsRecord(t *testing.T) {
	e := newEnv(t)
	w := e.do(request{method: "POST", target: "/v1/topics/orders/children", body: `{"child":"orders-retry","delay_ms":3600000}`})
	if w.Code != http.StatusOK {
		t.Fatalf("%d %s", w.Code, w.Body.String())
	}
	var got struct {
		Name          string   `json:"name"`
		Role          string   `json:"role"`
		Children      []string `json:"children"`
		Child         string   `json:"child"`
		AttachEpoch   string   `json:"attach_epoch"`
		AttachOffsets []uint64 `json:"attach_offsets"`
		DelayMs       int64    `json:"delay_ms"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Name != "orders" || got.Role != "parent" || !slices.Contains(got.Children, "orders-retry") ||
		got.Child != "orders-retry" || got.AttachEpoch == "" || got.AttachOffsets == nil || got.DelayMs != 3600000 {
		t.Fatalf("attach answer: %s", w.Body.String())
	}
}
