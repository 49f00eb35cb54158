package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// asUser sends a request with HTTP Basic credentials (none when user is "").
func asUser(t testing.TB, n *node, user, pass, method, path string, body any) biAnswer {
	t.Helper()
	var r io.Reader
	ct := ""
	switch b := body.(type) {
	case nil:
	case []byte:
		r, ct = bytes.NewReader(b), "text/plain"
	default:
		js, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r, ct = bytes.NewReader(js), "application/json"
	}
	req, err := http.NewRequest(method, n.url(path), r)
	if err != nil {
		t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := biHTTP.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return biAnswer{status: resp.StatusCode, body: b, hdr: resp.Header, what: method + " " + path + " as " + user}
}

type grant struct {
	Action   string   `json:"action"`
	Patterns []string `json:"patterns"`
}

type userBody struct {
	Username string  `json:"username"`
	Password string  `json:"password,omitempty"`
	Grants   []grant `json:"grants"`
}

const rootPass = "root-password-1"

// startSecureNode starts a single node with security on and waits until the
// root admin has been seeded and authenticates.
func startSecureNode(t *testing.T) *node {
	t.Helper()
	n := startNode(t, "NARAD_SECURITY_ENABLED=true", "NARAD_ADMIN_PASSWORD="+rootPass)
	eventually(t, 10*time.Second, "the root admin is seeded", func() bool {
		return asUser(t, n, "admin", rootPass, "GET", "/v1/topics", nil).status == http.StatusOK
	})
	return n
}

// rootHWM sums a topic's high watermarks, read as the root admin.
func rootHWM(t *testing.T, n *node, topic string) uint64 {
	t.Helper()
	a := asUser(t, n, "admin", rootPass, "GET", "/v1/topics/"+topic, nil)
	biWantStatus(t, a, http.StatusOK)
	var d struct {
		PartitionStats []struct {
			HighWatermark uint64 `json:"high_watermark"`
		} `json:"partition_stats"`
	}
	if err := json.Unmarshal(a.body, &d); err != nil {
		t.Fatal(err)
	}
	sum := uint64(0)
	for _, ps := range d.PartitionStats {
		sum += ps.HighWatermark
	}
	return sum
}

func usersList(t *testing.T, n *node) string {
	t.Helper()
	a := asUser(t, n, "admin", rootPass, "GET", "/v1/users", nil)
	biWantStatus(t, a, http.StatusOK)
	return string(a.body)
}

// TestSecurityGrantsAndOwnership walks docs/security.md: 401 for missing or
// wrong credentials, grants per action and topic pattern, ownership of the
// topics a user creates, and each refusal changing nothing.
func TestSecurityGrantsAndOwnership(t *testing.T) {
	n := startSecureNode(t)
	root := func(method, path string, body any) biAnswer {
		return asUser(t, n, "admin", rootPass, method, path, body)
	}

	a := asUser(t, n, "", "", "GET", "/v1/topics", nil)
	biWantError(t, a, http.StatusUnauthorized, "credentials")
	if got := a.hdr.Get("WWW-Authenticate"); got != `Basic realm="narad"` {
		t.Errorf("WWW-Authenticate %q", got)
	}
	biWantError(t, asUser(t, n, "admin", "wrong-password", "GET", "/v1/topics", nil), http.StatusUnauthorized)
	biWantError(t, asUser(t, n, "nobody", rootPass, "GET", "/v1/topics", nil), http.StatusUnauthorized)

	for _, name := range []string{"orders", "secret"} {
		biWantStatus(t, root("POST", "/v1/topics", map[string]any{"name": name, "partitions": 1}), http.StatusCreated)
	}
	created := root("POST", "/v1/users", userBody{Username: "alice", Password: "alice-pass-1", Grants: []grant{
		{"produce", []string{"orders"}}, {"consume", []string{"orders"}}, {"create", []string{"alice.*"}}}})
	biWantStatus(t, created, http.StatusCreated)
	if strings.Contains(string(created.body), "hash") || strings.Contains(string(created.body), "alice-pass-1") {
		t.Fatalf("the created user's answer shows a secret: %s", created.body)
	}
	alice := func(method, path string, body any) biAnswer {
		return asUser(t, n, "alice", "alice-pass-1", method, path, body)
	}

	// Grants: produce and consume where granted, 403 elsewhere.
	biWantStatus(t, alice("POST", "/v1/topics/orders/produce", []byte("o-1")), http.StatusAccepted)
	biWantError(t, alice("POST", "/v1/topics/secret/produce", []byte("s-1")), http.StatusForbidden, "alice", "secret")
	biWantError(t, alice("POST", "/v1/topics/secret/produce/batch", map[string]any{"records": []map[string]string{{"payload": "x"}}}), http.StatusForbidden)
	biWantError(t, alice("GET", "/v1/topics/secret/consume", nil), http.StatusForbidden)
	biWantError(t, alice("POST", "/v1/topics/secret/ack?receipt_handle=0:0:1", nil), http.StatusForbidden)
	// A fence: records of one partition commit in the order accepted, so
	// had a refused produce been accepted, the marker would land second.
	biWantStatus(t, root("POST", "/v1/topics/secret/produce", []byte("marker")), http.StatusAccepted)
	eventually(t, 10*time.Second, "the marker committed", func() bool { return rootHWM(t, n, "secret") >= 1 })
	if hwm := rootHWM(t, n, "secret"); hwm != 1 {
		t.Fatalf("a refused produce reached the topic: hwm %d after the marker", hwm)
	}
	eventually(t, 10*time.Second, "alice's record committed", func() bool { return rootHWM(t, n, "orders") == 1 })
	got := alice("GET", "/v1/topics/orders/consume?max=10", nil)
	biWantStatus(t, got, http.StatusOK)

	// Ownership: the creator may alter and delete; others may not.
	owned := alice("POST", "/v1/topics", map[string]any{"name": "alice.jobs", "partitions": 1})
	biWantStatus(t, owned, http.StatusCreated)
	if !strings.Contains(string(owned.body), `"owner":"alice"`) {
		t.Fatalf("created topic does not name its owner: %s", owned.body)
	}
	biWantError(t, alice("POST", "/v1/topics", map[string]any{"name": "bob.jobs"}), http.StatusForbidden, "create")
	biWantStatus(t, alice("PATCH", "/v1/topics/alice.jobs", map[string]any{"retention_ms": 3600000 * 48}), http.StatusOK)
	before := string(root("GET", "/v1/topics/orders", nil).body)
	biWantError(t, alice("PATCH", "/v1/topics/orders", map[string]any{"retention_ms": 3600000 * 48}), http.StatusForbidden, "owner")
	biWantError(t, alice("DELETE", "/v1/topics/orders", nil), http.StatusForbidden)
	biWantError(t, alice("POST", "/v1/topics/orders/children", map[string]any{"child": "alice.jobs"}), http.StatusForbidden)
	if after := string(root("GET", "/v1/topics/orders", nil).body); after != before {
		t.Fatalf("a refused change changed the topic:\n%s\n%s", before, after)
	}
	biWantStatus(t, alice("DELETE", "/v1/topics/alice.jobs", nil), http.StatusNoContent)
	// Listing and describing need only authentication.
	biWantStatus(t, alice("GET", "/v1/topics", nil), http.StatusOK)
	biWantStatus(t, alice("GET", "/v1/topics/secret", nil), http.StatusOK)
}

// TestSecurityUsersAPI sends every refusal of the users API and checks it
// changed nothing, then the no-escalation rule, password changes and
// deletion taking effect at once.
func TestSecurityUsersAPI(t *testing.T) {
	n := startSecureNode(t)
	root := func(method, path string, body any) biAnswer {
		return asUser(t, n, "admin", rootPass, method, path, body)
	}
	biWantStatus(t, root("POST", "/v1/users", userBody{Username: "alice", Password: "alice-pass-1",
		Grants: []grant{{"produce", []string{"orders"}}}}), http.StatusCreated)
	alice := func(method, path string, body any) biAnswer {
		return asUser(t, n, "alice", "alice-pass-1", method, path, body)
	}
	before := usersList(t, n)
	for _, tc := range []struct {
		name   string
		a      biAnswer
		status int
		says   string
	}{
		{"bad username", root("POST", "/v1/users", userBody{Username: "a b", Password: "long-enough"}), 400, "username"},
		{"long username", root("POST", "/v1/users", userBody{Username: strings.Repeat("u", 65), Password: "long-enough"}), 400, "username"},
		{"short password", root("POST", "/v1/users", userBody{Username: "bob", Password: "short"}), 400, "password"},
		{"long password", root("POST", "/v1/users", userBody{Username: "bob", Password: strings.Repeat("p", 257)}), 400, "password"},
		{"unknown action", root("POST", "/v1/users", userBody{Username: "bob", Password: "long-enough", Grants: []grant{{"delete", []string{"*"}}}}), 400, "action"},
		{"inner wildcard", root("POST", "/v1/users", userBody{Username: "bob", Password: "long-enough", Grants: []grant{{"consume", []string{"a*b"}}}}), 400, "prefix"},
		{"unknown field", root("POST", "/v1/users", map[string]any{"username": "bob", "password": "long-enough", "role": "x"}), 400, "role"},
		{"not JSON", root("POST", "/v1/users", []byte("username=bob")), 400, ""},
		{"exists", root("POST", "/v1/users", userBody{Username: "alice", Password: "long-enough"}), 409, `user "alice" already exists`},
		{"no such user", root("GET", "/v1/users/nobody", nil), 404, "nobody"},
		{"grants of no such user", root("PUT", "/v1/users/nobody/grants", map[string]any{"grants": []grant{}}), 404, "nobody"},
		{"grants missing", root("PUT", "/v1/users/alice/grants", map[string]any{}), 400, "grants"},
		{"password of no such user", root("PUT", "/v1/users/nobody/password", map[string]any{"password": "long-enough"}), 404, "nobody"},
		{"delete no such user", root("DELETE", "/v1/users/nobody", nil), 404, "nobody"},
		{"delete yourself", root("DELETE", "/v1/users/admin", nil), 409, "itself"},
		{"not an admin: list", alice("GET", "/v1/users", nil), 403, "admin"},
		{"not an admin: create", alice("POST", "/v1/users", userBody{Username: "bob", Password: "long-enough"}), 403, "admin"},
		{"not an admin: read another", alice("GET", "/v1/users/admin", nil), 403, ""},
		{"not an admin: grant yourself", alice("PUT", "/v1/users/alice/grants", map[string]any{"grants": []grant{{"admin", []string{"*"}}}}), 403, ""},
		{"own password without current", alice("PUT", "/v1/users/alice/password", map[string]any{"password": "alice-pass-2"}), 400, "current_password"},
		{"own password, wrong current", alice("PUT", "/v1/users/alice/password", map[string]any{"password": "alice-pass-2", "current_password": "nope-nope"}), 403, "current_password"},
		{"no credentials", asUser(t, n, "", "", "GET", "/v1/users", nil), 401, ""},
	} {
		var says []string
		if tc.says != "" {
			says = append(says, tc.says)
		}
		biWantError(t, tc.a, tc.status, says...)
		if after := usersList(t, n); after != before {
			t.Fatalf("%s changed the users:\n%s\n%s", tc.name, before, after)
		}
	}
	// A user reads itself.
	if self := alice("GET", "/v1/users/alice", nil); self.status != 200 || !strings.Contains(string(self.body), `"username":"alice"`) {
		t.Fatalf("reading yourself: %v", self)
	}

	// No escalation: a scoped admin hands out only what it holds, and
	// cannot touch a user who holds more.
	biWantStatus(t, root("POST", "/v1/users", userBody{Username: "ops", Password: "ops-pass-1",
		Grants: []grant{{"admin", []string{"team.*"}}}}), http.StatusCreated)
	ops := func(method, path string, body any) biAnswer {
		return asUser(t, n, "ops", "ops-pass-1", method, path, body)
	}
	biWantStatus(t, ops("POST", "/v1/users", userBody{Username: "teamer", Password: "team-pass-1",
		Grants: []grant{{"produce", []string{"team.a"}}, {"consume", []string{"team.b.*"}}}}), http.StatusCreated)
	before = usersList(t, n)
	biWantError(t, ops("POST", "/v1/users", userBody{Username: "rogue", Password: "rogue-pass",
		Grants: []grant{{"produce", []string{"orders"}}}}), http.StatusForbidden, "grant")
	biWantError(t, ops("PUT", "/v1/users/teamer/grants", map[string]any{"grants": []grant{{"admin", []string{"*"}}}}), http.StatusForbidden)
	biWantError(t, ops("DELETE", "/v1/users/alice", nil), http.StatusForbidden, "alice")
	biWantError(t, ops("PUT", "/v1/users/admin/password", map[string]any{"password": "taken-over"}), http.StatusForbidden)
	if after := usersList(t, n); after != before {
		t.Fatalf("an escalation attempt changed the users:\n%s\n%s", before, after)
	}
	if list := ops("GET", "/v1/users", nil); list.status != 200 || strings.Contains(string(list.body), `"username":"admin"`) ||
		!strings.Contains(string(list.body), `"teamer"`) {
		t.Fatalf("a scoped admin's list: %v", list)
	}

	// Password change with the current password; the old one stops working.
	biWantStatus(t, alice("PUT", "/v1/users/alice/password", map[string]any{"password": "alice-pass-2", "current_password": "alice-pass-1"}), http.StatusNoContent)
	biWantError(t, alice("GET", "/v1/topics", nil), http.StatusUnauthorized)
	biWantStatus(t, asUser(t, n, "alice", "alice-pass-2", "GET", "/v1/topics", nil), http.StatusOK)
	// An admin reset needs no current password; deletion ends access.
	biWantStatus(t, root("PUT", "/v1/users/alice/password", map[string]any{"password": "alice-pass-3"}), http.StatusNoContent)
	biWantStatus(t, asUser(t, n, "alice", "alice-pass-3", "GET", "/v1/topics", nil), http.StatusOK)
	biWantStatus(t, root("DELETE", "/v1/users/alice", nil), http.StatusNoContent)
	biWantError(t, asUser(t, n, "alice", "alice-pass-3", "GET", "/v1/topics", nil), http.StatusUnauthorized)
	// Exactly the two refused logins above: the node was ready only once
	// the root admin worked, so no start-up attempt failed.
	if f := n.metric("narad_auth_failures_total"); f != 2 {
		t.Errorf("narad_auth_failures_total = %v, want the 2 failed attempts counted", f)
	}
}

// generatedPassword is the one line a start that generated the root
// admin's password prints on standard error: the password ends it.
var generatedPassword = regexp.MustCompile(`(?m)^\*\*\* narad: GENERATED PASSWORD .*: (\S+)$`)

// TestSecurityGeneratedAdminPasswordLoggedOnce: without
// NARAD_ADMIN_PASSWORD the root admin gets a random password, printed by
// the start that seeded it on a line of its own (never inside a log
// record) and never again; it keeps working across a restart (which
// generates, and must not print, another).
func TestSecurityGeneratedAdminPasswordLoggedOnce(t *testing.T) {
	n := startNode(t, "NARAD_SECURITY_ENABLED=true", "NARAD_LOG_FORMAT=json", "NARAD_LOG_LEVEL=info")
	var pass string
	eventually(t, 10*time.Second, "the generated password on standard error", func() bool {
		m := generatedPassword.FindStringSubmatch(n.logs.String())
		if m != nil {
			pass = m[1]
		}
		return m != nil
	})
	biWantStatus(t, asUser(t, n, "admin", pass, "GET", "/v1/topics", nil), http.StatusOK)
	said := false
	for _, line := range strings.Split(strings.TrimSpace(n.logs.String()), "\n") {
		if generatedPassword.MatchString(line) {
			continue
		}
		if !strings.HasPrefix(line, "{") {
			t.Errorf("a line that is neither a JSON log record nor the password line: %q", line)
		}
		if strings.Contains(line, pass) {
			t.Errorf("a log record carries the password: %s", line)
		}
		said = said || strings.Contains(line, "created the root admin with a generated password")
	}
	if !said {
		t.Error("no log record says a password was generated")
	}
	n.stop()
	n.start()
	biWantStatus(t, asUser(t, n, "admin", pass, "GET", "/v1/topics", nil), http.StatusOK)
	if strings.Contains(n.logs.String(), "GENERATED PASSWORD") || strings.Contains(n.logs.String(), pass) {
		t.Fatalf("a restart printed a password:\n%s", n.logs.String())
	}
}

// TestSecurityUsersAcrossCluster: a user created through one node is
// authenticated and authorized by every node (each from its own replica),
// and the root admin is seeded once for the cluster.
func TestSecurityUsersAcrossCluster(t *testing.T) {
	// Info level: the seeding node logs "created the root admin" there.
	nodes := startCluster(t, 3, "NARAD_SECURITY_ENABLED=true", "NARAD_ADMIN_PASSWORD="+rootPass, "NARAD_LOG_LEVEL=info")
	for _, n := range nodes {
		eventually(t, 10*time.Second, "the root admin works on "+n.id, func() bool {
			return asUser(t, n, "admin", rootPass, "GET", "/v1/topics", nil).status == http.StatusOK
		})
	}
	biWantStatus(t, asUser(t, nodes[1], "admin", rootPass, "POST", "/v1/topics", map[string]any{"name": "shared", "partitions": 3}), http.StatusCreated)
	biWantStatus(t, asUser(t, nodes[2], "admin", rootPass, "POST", "/v1/users", userBody{Username: "writer", Password: "writer-pass",
		Grants: []grant{{"produce", []string{"shared"}}}}), http.StatusCreated)
	for _, n := range nodes {
		eventually(t, 10*time.Second, "writer authenticates on "+n.id, func() bool {
			return asUser(t, n, "writer", "writer-pass", "POST", "/v1/topics/shared/produce", []byte("w")).status == http.StatusAccepted
		})
		biWantError(t, asUser(t, n, "writer", "writer-pass", "GET", "/v1/topics/shared/consume", nil), http.StatusForbidden)
	}
	seeded := 0
	for _, n := range nodes {
		seeded += strings.Count(n.logs.String(), "created the root admin")
	}
	if seeded != 1 {
		t.Fatalf("the root admin was seeded %d times, want once", seeded)
	}
}
