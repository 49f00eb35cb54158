package main

import (
	"encoding/json"
	"strings"
	"testing"
)

const newKeyBody = `{"access_key_id":"NKIAJ7Q3XW2LM4ZR5T6Y","secret_access_key":"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY","created_at":1700000000}`

func TestUserKeysAddPrintsTheSecretOnceWithAWarning(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 201, newKeyBody })
	c := against(b)
	r := c.run(t, "user", "keys", "add", "billing")
	mustOK(t, r)
	want := "created access key NKIAJ7Q3XW2LM4ZR5T6Y for billing\naccess key id:     NKIAJ7Q3XW2LM4ZR5T6Y\nsecret access key: wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY\n"
	if r.stdout != want || r.stderr != secretShownOnce {
		t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
	}
	r = c.run(t, "user", "keys", "add", "billing", "-o", "json")
	mustOK(t, r)
	var got map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got["secret_access_key"] != "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" || got["created_at"] != float64(1700000000) {
		t.Errorf("-o json: %s (%v)", r.stdout, err)
	}
	if !strings.Contains(r.stderr, "shown this once") {
		t.Errorf("-o json without the warning: %q", r.stderr)
	}
	expectRequests(t, b, req{Method: "POST", Path: "/v1/users/billing/access-keys"}, req{Method: "POST", Path: "/v1/users/billing/access-keys"})
}

func TestUserKeysListAndRemove(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		if r.Method == "GET" {
			return 200, `{"access_keys":[{"access_key_id":"NKIAJ7Q3XW2LM4ZR5T6Y","created_at":1700000000}]}`
		}
		return 204, ""
	})
	c := against(b)
	r := c.run(t, "user", "keys", "ls", "billing")
	mustOK(t, r)
	if r.stdout != "ACCESS KEY ID         CREATED\nNKIAJ7Q3XW2LM4ZR5T6Y  2023-11-14T22:13:20Z\n" {
		t.Errorf("ls: %q", r.stdout)
	}
	r = c.run(t, "user", "keys", "ls", "billing", "-o", "json")
	mustOK(t, r)
	if strings.Join(strings.Fields(r.stdout), "") != `{"access_keys":[{"access_key_id":"NKIAJ7Q3XW2LM4ZR5T6Y","created_at":1700000000}]}` {
		t.Errorf("ls -o json: %s", r.stdout)
	}
	r = c.run(t, "user", "keys", "rm", "billing", "NKIAJ7Q3XW2LM4ZR5T6Y")
	mustOK(t, r)
	if r.stdout != "revoked access key NKIAJ7Q3XW2LM4ZR5T6Y of billing\n" {
		t.Errorf("rm: %q", r.stdout)
	}
	r = c.run(t, "user", "keys", "rm", "billing", "NKIAJ7Q3XW2LM4ZR5T6Y", "-o", "json")
	mustOK(t, r)
	if strings.Join(strings.Fields(r.stdout), "") != `{"username":"billing","access_key_id":"NKIAJ7Q3XW2LM4ZR5T6Y","deleted":true}` {
		t.Errorf("rm -o json: %s", r.stdout)
	}
	get := req{Method: "GET", Path: "/v1/users/billing/access-keys"}
	del := req{Method: "DELETE", Path: "/v1/users/billing/access-keys/NKIAJ7Q3XW2LM4ZR5T6Y"}
	expectRequests(t, b, get, get, del, del)
}

func TestUserKeysErrors(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		return 409, `{"error":"user \"billing\" holds 2 access keys already"}`
	})
	r := against(b).run(t, "user", "keys", "add", "billing")
	if r.code == 0 || !strings.Contains(r.stderr, "holds 2 access keys already") || r.stdout != "" || strings.Contains(r.stderr, "shown this once") {
		t.Errorf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	r = against(b).run(t, "user", "keys", "rm", "billing")
	if r.code == 0 {
		t.Error("rm without an ID succeeded")
	}
}
