package e2e

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// TestSecurityAccessKeys: a user creates its own access keys, at most
// two; the secret is answered once and is nowhere in the data
// directory in clear (Raft log, snapshots, the users bucket); a node
// without a cluster secret keeps its sealing key in a 0600 file beside
// the metastore; revoking works once.
func TestSecurityAccessKeys(t *testing.T) {
	n := startNode(t, "NARAD_SECURITY_ENABLED=true", "NARAD_ADMIN_PASSWORD="+rootPass)
	biWantStatus(t, asUser(t, n, "admin", rootPass, "POST", "/v1/users", userBody{Username: "alice", Password: "alice-password", Grants: []grant{}}), http.StatusCreated)

	var keys []map[string]any
	for range 2 {
		a := asUser(t, n, "alice", "alice-password", "POST", "/v1/users/alice/access-keys", nil)
		biWantStatus(t, a, http.StatusCreated)
		var k map[string]any
		if err := json.Unmarshal(a.body, &k); err != nil || len(k["secret_access_key"].(string)) != 40 || len(k["access_key_id"].(string)) != 20 {
			t.Fatalf("created %s (%v)", a.body, err)
		}
		keys = append(keys, k)
	}
	biWantError(t, asUser(t, n, "alice", "alice-password", "POST", "/v1/users/alice/access-keys", nil), http.StatusConflict, "access keys")
	biWantError(t, asUser(t, n, "alice", "alice-password", "GET", "/v1/users/admin/access-keys", nil), http.StatusForbidden)

	a := asUser(t, n, "admin", rootPass, "GET", "/v1/users/alice/access-keys", nil)
	biWantStatus(t, a, http.StatusOK)
	for _, k := range keys {
		if !bytes.Contains(a.body, []byte(k["access_key_id"].(string))) || bytes.Contains(a.body, []byte(k["secret_access_key"].(string))) {
			t.Fatalf("list %s", a.body)
		}
	}

	data := filepath.Join(n.dir, "data")
	fi, err := os.Stat(filepath.Join(data, "metastore", "access-keys.key"))
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 32 {
		t.Fatalf("sealing key file: %v %v", fi, err)
	}
	err = filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil // a file that went away mid-walk
		}
		for _, k := range keys {
			if bytes.Contains(b, []byte(k["secret_access_key"].(string))) {
				t.Errorf("%s holds a secret in clear", p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	id := keys[0]["access_key_id"].(string)
	biWantStatus(t, asUser(t, n, "alice", "alice-password", "DELETE", "/v1/users/alice/access-keys/"+id, nil), http.StatusNoContent)
	biWantError(t, asUser(t, n, "alice", "alice-password", "DELETE", "/v1/users/alice/access-keys/"+id, nil), http.StatusNotFound)
}
