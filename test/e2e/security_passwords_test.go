package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSecurityLongPasswords: passwords of 8..256 bytes work whole, the
// root admin's too — bcrypt alone reads 72 bytes, so two passwords that
// share those must still be told apart. The node is ready only once the
// root admin works: no eventually needed after the start.
func TestSecurityLongPasswords(t *testing.T) {
	adminPass := strings.Repeat("a", 99) + "!"
	n := startNode(t, "NARAD_SECURITY_ENABLED=true", "NARAD_ADMIN_PASSWORD="+adminPass)
	biWantStatus(t, asUser(t, n, "admin", adminPass, "GET", "/v1/topics", nil), http.StatusOK)
	biWantError(t, asUser(t, n, "admin", adminPass[:72], "GET", "/v1/topics", nil), http.StatusUnauthorized)
	biWantError(t, asUser(t, n, "admin", strings.Repeat("a", 99)+"?", "GET", "/v1/topics", nil), http.StatusUnauthorized)

	for _, size := range []int{73, 256} {
		name := "long" + strings.Repeat("x", size%7)
		pass := strings.Repeat("p", size-1) + "1"
		biWantStatus(t, asUser(t, n, "admin", adminPass, "POST", "/v1/users", userBody{Username: name, Password: pass}), http.StatusCreated)
		biWantStatus(t, asUser(t, n, name, pass, "GET", "/v1/topics", nil), http.StatusOK)
		biWantError(t, asUser(t, n, name, strings.Repeat("p", size-1)+"2", "GET", "/v1/topics", nil), http.StatusUnauthorized)
		changed := strings.Repeat("q", size-1) + "1"
		biWantStatus(t, asUser(t, n, name, pass, "PUT", "/v1/users/"+name+"/password",
			map[string]any{"password": changed, "current_password": pass}), http.StatusNoContent)
		biWantStatus(t, asUser(t, n, name, changed, "GET", "/v1/topics", nil), http.StatusOK)
	}
	biWantError(t, asUser(t, n, "admin", adminPass, "POST", "/v1/users", userBody{Username: "over", Password: strings.Repeat("p", 257)}),
		http.StatusBadRequest, "password")
}

// TestSecurityAdminPasswordOutOfRangeRefusesStart: an admin password the
// users API would refuse stops the node at start with an error naming
// the setting, instead of a node that is up with no user at all.
func TestSecurityAdminPasswordOutOfRangeRefusesStart(t *testing.T) {
	for _, pass := range []string{"Zq9!x", strings.Repeat("p", 257)} {
		dir := t.TempDir()
		n := &node{t: t, id: "node-1", dir: dir, http: freeAddr(t), cluster: freeAddr(t),
			env: []string{"NARAD_SECURITY_ENABLED=true", "NARAD_ADMIN_PASSWORD=" + pass}}
		n.startNoWait()
		t.Cleanup(n.kill)
		select {
		case <-n.done:
		case <-time.After(20 * time.Second):
			t.Fatalf("a %d-byte NARAD_ADMIN_PASSWORD: the node did not refuse to start:\n%s", len(pass), tail(n.logs.String(), 2000))
		}
		if code := n.cmd.ProcessState.ExitCode(); code == 0 || !strings.Contains(n.logs.String(), "NARAD_ADMIN_PASSWORD") {
			t.Fatalf("exit %d, want non-zero with an error naming NARAD_ADMIN_PASSWORD:\n%s", code, n.logs.String())
		}
		if strings.Contains(n.logs.String(), pass) {
			t.Fatalf("the refused password was logged:\n%s", n.logs.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "data", "metastore")); err == nil {
			t.Fatal("a refused start created a metastore")
		}
	}
}
