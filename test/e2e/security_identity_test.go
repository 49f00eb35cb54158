package e2e

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestSecurityOwnershipIsByIdentity: a topic belongs to the user who
// created it, not to the name. Deleting carol and creating a new carol
// (here by a scoped admin, who could not touch the topic otherwise) hands
// the new one nothing: it may not alter, delete, or read the old one's
// topic through a child.
func TestSecurityOwnershipIsByIdentity(t *testing.T) {
	n := startSecureNode(t)
	root := func(method, path string, body any) biAnswer {
		return asUser(t, n, "admin", rootPass, method, path, body)
	}
	biWantStatus(t, root("POST", "/v1/users", userBody{Username: "ops", Password: "ops-pass-1",
		Grants: []grant{{"admin", []string{"scratch.*"}}}}), http.StatusCreated)
	biWantStatus(t, root("POST", "/v1/users", userBody{Username: "carol", Password: "carol-pass-1",
		Grants: []grant{{"create", []string{"carol.*"}}}}), http.StatusCreated)
	biWantStatus(t, asUser(t, n, "carol", "carol-pass-1", "POST", "/v1/topics", map[string]any{"name": "carol.ledger", "partitions": 1}), http.StatusCreated)
	// The first carol owns it: ownership works for the right user.
	biWantStatus(t, asUser(t, n, "carol", "carol-pass-1", "PATCH", "/v1/topics/carol.ledger", map[string]any{"retention_ms": 3600000 * 48}), http.StatusOK)
	biWantStatus(t, root("POST", "/v1/topics/carol.ledger/produce", []byte("private")), http.StatusAccepted)

	biWantStatus(t, root("DELETE", "/v1/users/carol", nil), http.StatusNoContent)
	biWantStatus(t, asUser(t, n, "ops", "ops-pass-1", "POST", "/v1/users", userBody{Username: "carol", Password: "carol-pass-2",
		Grants: []grant{{"create", []string{"scratch.*"}}, {"consume", []string{"scratch.*"}}}}), http.StatusCreated)
	carol := func(method, path string, body any) biAnswer {
		return asUser(t, n, "carol", "carol-pass-2", method, path, body)
	}
	before := string(root("GET", "/v1/topics/carol.ledger", nil).body)
	biWantError(t, carol("PATCH", "/v1/topics/carol.ledger", map[string]any{"retention_ms": 3600000 * 72}), http.StatusForbidden, "owner")
	biWantError(t, carol("POST", "/v1/topics", map[string]any{"name": "scratch.tap", "parent": "carol.ledger"}), http.StatusForbidden, "owner")
	biWantStatus(t, carol("POST", "/v1/topics", map[string]any{"name": "scratch.tap", "partitions": 1}), http.StatusCreated)
	biWantError(t, carol("POST", "/v1/topics/carol.ledger/children", map[string]any{"child": "scratch.tap"}), http.StatusForbidden, "owner")
	biWantError(t, carol("GET", "/v1/topics/carol.ledger/consume", nil), http.StatusForbidden)
	biWantError(t, carol("DELETE", "/v1/topics/carol.ledger", nil), http.StatusForbidden, "owner")
	if after := string(root("GET", "/v1/topics/carol.ledger", nil).body); after != before {
		t.Fatalf("a refused change changed the topic:\n%s\n%s", before, after)
	}

	// The describe still names the creator, with the incarnation that
	// tells the deleted carol from the one now holding the name.
	var topic struct {
		Owner   string `json:"owner"`
		OwnerID uint64 `json:"owner_id"`
	}
	var user struct {
		ID uint64 `json:"id"`
	}
	if err := json.Unmarshal([]byte(before), &topic); err != nil {
		t.Fatal(err)
	}
	u := root("GET", "/v1/users/carol", nil)
	biWantStatus(t, u, http.StatusOK)
	if err := json.Unmarshal(u.body, &user); err != nil {
		t.Fatal(err)
	}
	if topic.Owner != "carol" || topic.OwnerID == 0 || user.ID == 0 || user.ID == topic.OwnerID {
		t.Fatalf("describe shows owner %q #%d; the new carol is #%d", topic.Owner, topic.OwnerID, user.ID)
	}
	// An admin of the topic still manages it.
	biWantStatus(t, root("DELETE", "/v1/topics/carol.ledger", nil), http.StatusNoContent)
}
