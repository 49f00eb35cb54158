package main

import (
	"strings"
	"testing"
)

// expectRequests checks method, path and body of every request b got.
func expectRequests(t *testing.T, b *broker, want ...req) {
	t.Helper()
	got := b.requests()
	if len(got) != len(want) {
		t.Fatalf("got %d requests %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i].Method != want[i].Method || got[i].Path != want[i].Path || got[i].Body != want[i].Body {
			t.Errorf("request %d:\n got %s %s %s\nwant %s %s %s", i, got[i].Method, got[i].Path, got[i].Body,
				want[i].Method, want[i].Path, want[i].Body)
		}
	}
}

func TestUserAddSendsGrantsAndStdinPassword(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		return 201, `{"username":"billing","grants":[{"action":"produce","patterns":["orders-*"]},{"action":"consume","patterns":["a","b.*"]}]}`
	})
	c := against(b)
	c.stdin = "pass word 1\nignored\n"
	r := c.run(t, "user", "add", "billing", "--grant", "produce:orders-*", "--grant", "consume:a, b.*", "--password-stdin")
	mustOK(t, r)
	expectRequests(t, b, req{Method: "POST", Path: "/v1/users",
		Body: `{"username":"billing","password":"pass word 1","grants":[{"action":"produce","patterns":["orders-*"]},{"action":"consume","patterns":["a","b.*"]}]}`})
	if r.stdout != "created user billing: produce:orders-*; consume:a,b.*\n" || r.stderr != "" {
		t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
	}
}

func TestUserAddPromptsOnlyOnATerminal(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 201, `{"username":"bob","grants":[]}` })
	c := against(b)
	c.stdin, c.stdinTTY = "secret-pw\r\n", true
	r := c.run(t, "user", "add", "bob")
	mustOK(t, r)
	if r.stderr != "Password for new user bob: " || r.stdout != "created user bob: no grants\n" {
		t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
	}
	// --password-stdin is for scripts: no prompt even on a terminal.
	r = c.run(t, "user", "add", "bob", "--password-stdin")
	mustOK(t, r)
	if r.stderr != "" {
		t.Errorf("prompted despite --password-stdin: %q", r.stderr)
	}
	want := req{Method: "POST", Path: "/v1/users", Body: `{"username":"bob","password":"secret-pw","grants":[]}`}
	expectRequests(t, b, want, want)
}

func TestUserAddRefusesBadInputBeforeSending(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 201, `{}` })
	for _, tc := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"pw\n", []string{"--grant", "produce"}, `narad: --grant "produce": no colon after the action (want ACTION:PATTERN[,PATTERN...], e.g. produce:orders-*)`},
		{"pw\n", []string{"--grant", "publish:a"}, `narad: --grant "publish:a": unknown action "publish"; the actions are produce, consume, create, admin`},
		{"pw\n", []string{"--grant", "produce:"}, `narad: --grant "produce:": empty pattern`},
		{"pw\n", []string{"--grant", "consume:a,,b"}, `narad: --grant "consume:a,,b": empty pattern`},
		{"pw\n", []string{"--grant", "consume:a*b"}, `narad: --grant "consume:a*b": pattern "a*b": "*" may only end a pattern`},
		{"", nil, "narad: no password on standard input (pipe one in, or type it)\n"},
		{"\n", nil, "narad: the password is empty\n"},
	} {
		c := against(b)
		c.stdin = tc.stdin
		r := c.run(t, append([]string{"user", "add", "bob"}, tc.args...)...)
		if r.code != 1 || !strings.HasPrefix(r.stderr, tc.want) {
			t.Errorf("%v: exit %d stderr %q, want prefix %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if n := len(b.requests()); n != 0 {
		t.Errorf("%d requests sent for invalid input", n)
	}
	// A plain-flag password is not a thing.
	if r := against(b).run(t, "user", "add", "bob", "--new-password", "x"); r.code != 1 {
		t.Errorf("unknown flag accepted: %+v", r)
	}
}

func TestUserGrantReplacesOrRemovesExplicitly(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		if strings.Contains(r.Body, "admin") {
			return 200, `{"username":"bob","grants":[{"action":"admin","patterns":["team-*"]}]}`
		}
		return 200, `{"username":"bob","grants":[]}`
	})
	c := against(b)
	r := c.run(t, "user", "grant", "bob", "--grant", "admin:team-*")
	mustOK(t, r)
	if r.stdout != "grants of bob: admin:team-*\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	r = c.run(t, "user", "grant", "bob", "--none")
	mustOK(t, r)
	if r.stdout != "grants of bob: no grants\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	for _, args := range [][]string{{}, {"--none", "--grant", "produce:x"}, {"--grant", "nope"}} {
		r := c.run(t, append([]string{"user", "grant", "bob"}, args...)...)
		if r.code != 1 || !strings.HasPrefix(r.stderr, "narad: ") {
			t.Errorf("%v: exit %d stderr %q", args, r.code, r.stderr)
		}
	}
	if r := c.run(t, "user", "grant", "bob"); !strings.Contains(r.stderr, "--none to remove every grant") {
		t.Errorf("empty call: stderr %q", r.stderr)
	}
	expectRequests(t, b,
		req{Method: "PUT", Path: "/v1/users/bob/grants", Body: `{"grants":[{"action":"admin","patterns":["team-*"]}]}`},
		req{Method: "PUT", Path: "/v1/users/bob/grants", Body: `{"grants":[]}`},
	)
}

func TestUserListSortedTableAndJSON(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		return 200, `{"users":[{"username":"zed","grants":[]},{"username":"alice","grants":[{"action":"produce","patterns":["orders-*"]},{"action":"consume","patterns":["a","b.*"]}]}]}`
	})
	r := against(b).run(t, "user", "ls")
	mustOK(t, r)
	want := "USER   GRANTS                           LIMITS\n" +
		"alice  produce:orders-*; consume:a,b.*  -\n" +
		"zed    -                                -\n"
	if r.stdout != want {
		t.Errorf("stdout\n%s\nwant\n%s", r.stdout, want)
	}
	r = against(b).run(t, "user", "ls", "--json")
	mustOK(t, r)
	wantJSON := `{
  "users": [
    {
      "username": "alice",
      "grants": [
        {
          "action": "produce",
          "patterns": [
            "orders-*"
          ]
        },
        {
          "action": "consume",
          "patterns": [
            "a",
            "b.*"
          ]
        }
      ]
    },
    {
      "username": "zed",
      "grants": []
    }
  ]
}
`
	if r.stdout != wantJSON {
		t.Errorf("json\n%s\nwant\n%s", r.stdout, wantJSON)
	}
	expectRequests(t, b, req{Method: "GET", Path: "/v1/users"}, req{Method: "GET", Path: "/v1/users"})
}

func TestUserRemove(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 204, "" })
	r := against(b).run(t, "user", "rm", "bob")
	mustOK(t, r)
	expectRequests(t, b, req{Method: "DELETE", Path: "/v1/users/bob"})
	if r.stdout != "deleted user bob\n" {
		t.Errorf("stdout %q", r.stdout)
	}
}

func TestUserPasswdOwnSendsCurrentAdminResetDoesNot(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 204, "" })
	c := against(b)
	c.stdin = "new-password\n"

	// Yourself, by default: the password you sign in with is the current one.
	r := c.run(t, "user", "passwd", "-u", "alice", "-p", "old-password")
	mustOK(t, r)
	if r.stdout != "changed the password of alice\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	// Yourself by name, the account implied by a password alone.
	c.env["NARAD_PASS"] = "root-pw"
	mustOK(t, c.run(t, "user", "passwd", "admin"))
	// Someone else: an admin reset, no current password.
	mustOK(t, c.run(t, "user", "passwd", "bob"))

	expectRequests(t, b,
		req{Method: "PUT", Path: "/v1/users/alice/password", Body: `{"password":"new-password","current_password":"old-password"}`},
		req{Method: "PUT", Path: "/v1/users/admin/password", Body: `{"password":"new-password","current_password":"root-pw"}`},
		req{Method: "PUT", Path: "/v1/users/bob/password", Body: `{"password":"new-password"}`},
	)
	got := b.requests()
	if got[0].Auth != "alice:old-password" || got[2].Auth != "admin:root-pw" {
		t.Errorf("auth %q, %q", got[0].Auth, got[2].Auth)
	}
}

func TestUserPasswdNeedsSomeone(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 204, "" })
	c := against(b)
	c.stdin = "new-password\n"
	r := c.run(t, "user", "passwd")
	if r.code != 1 || r.stderr != "narad: whose password? Give NAME, or sign in with --user, NARAD_USER or a context\n" {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
	if len(b.requests()) != 0 {
		t.Error("request sent without a user")
	}
}

func TestUserAPIErrorIsReported(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 409, `{"error":"user \"bob\" already exists"}` })
	c := against(b)
	c.stdin = "password\n"
	r := c.run(t, "user", "add", "bob")
	if r.code != 1 || r.stderr != "narad: user \"bob\" already exists (HTTP 409)\n" || r.stdout != "" {
		t.Errorf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

// A password typed as --password/-p is in argv, where other local users
// see it (ps, /proc): it still works (docs/security.md documents it), but
// says so on stderr, once. On user add and passwd, where "-p x" reads
// like the new password, the warning also says whose password -p is.
func TestArgvPasswordWarns(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		if r.Path == "/v1/users" {
			return 201, `{"username":"bob","grants":[]}`
		}
		return 200, `{"topics":[],"next_page_token":""}`
	})
	c := against(b)
	c.stdin = "bobs-password\n"
	r := c.run(t, "user", "add", "bob", "-p", "admin-pw")
	mustOK(t, r)
	if strings.Count(r.stderr, "visible to other local users") != 1 || !strings.Contains(r.stderr, "not bob's") {
		t.Errorf("user add -p: stderr %q", r.stderr)
	}
	if got := b.only("POST", "/v1/users"); len(got) != 1 || got[0].Auth != "admin:admin-pw" || !strings.Contains(got[0].Body, `"password":"bobs-password"`) {
		t.Errorf("requests %+v", got)
	}
	r = c.run(t, "topic", "ls", "--password", "admin-pw")
	mustOK(t, r)
	if strings.Count(r.stderr, "visible to other local users") != 1 || !strings.Contains(r.stderr, "NARAD_PASS") {
		t.Errorf("topic ls --password: stderr %q", r.stderr)
	}
	c.stdin = "new-admin-pw\n"
	r = c.run(t, "user", "passwd", "-p", "admin-pw")
	mustOK(t, r)
	if !strings.Contains(r.stderr, "is your current password, not the new one") {
		t.Errorf("user passwd -p: stderr %q", r.stderr)
	}
	c.env["NARAD_PASS"] = "admin-pw" // the environment is not argv
	if r := c.run(t, "topic", "ls"); r.code != 0 || r.stderr != "" {
		t.Errorf("NARAD_PASS: exit %d stderr %q", r.code, r.stderr)
	}
}
