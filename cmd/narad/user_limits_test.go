package main

import (
	"strings"
	"testing"
)

const limitedUser = `{"username":"batch","grants":[],"limits":{"produce_records_per_s":1000,"produce_bytes_per_s":4194304,"consume_requests_per_s":0},"limits_from_defaults":["consume_requests_per_s"]}`

func TestUserAddSendsLimits(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 201, limitedUser })
	c := against(b)
	c.stdin = "s3cret-pw\n"
	r := c.run(t, "user", "add", "batch", "--limit", "produce_records_per_s=1000", "--limit", "produce_bytes_per_s=4MiB,consume_requests_per_s=default", "--password-stdin")
	mustOK(t, r)
	expectRequests(t, b, req{Method: "POST", Path: "/v1/users",
		Body: `{"username":"batch","password":"s3cret-pw","grants":[],"limits":{"produce_records_per_s":1000,"produce_bytes_per_s":4194304}}`})
	if want := "created user batch: no grants; limits: produce_records_per_s=1000 produce_bytes_per_s=4194304 consume_requests_per_s=unlimited(default)\n"; r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
}

func TestUserEditSendsOnlyWhatChanges(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 200, limitedUser })
	c := against(b)
	mustOK(t, c.run(t, "user", "edit", "batch", "--limit", "consume_requests_per_s=unlimited", "--limit", "produce_records_per_s=default"))
	mustOK(t, c.run(t, "user", "edit", "batch", "--reset-limits"))
	expectRequests(t, b,
		req{Method: "PATCH", Path: "/v1/users/batch", Body: `{"limits":{"consume_requests_per_s":0,"produce_records_per_s":null}}`},
		req{Method: "PATCH", Path: "/v1/users/batch", Body: `{"limits":null}`},
	)
}

// Bad --limit values are refused before anything is sent, naming the
// value and what is wanted.
func TestUserLimitFlagRefusals(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 200, limitedUser })
	c := against(b)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"user", "edit", "batch"}, "nothing to change"},
		{[]string{"user", "edit", "batch", "--limit", "records=5"}, `unknown limit "records"`},
		{[]string{"user", "edit", "batch", "--limit", "produce_records_per_s"}, "no '='"},
		{[]string{"user", "edit", "batch", "--limit", "produce_records_per_s=-3"}, "negative"},
		{[]string{"user", "edit", "batch", "--limit", "produce_records_per_s=lots"}, `"lots" is not a whole number`},
		{[]string{"user", "edit", "batch", "--limit", "produce_records_per_s=1MiB"}, "not a whole number"},
		{[]string{"user", "edit", "batch", "--limit", "produce_records_per_s=1,produce_records_per_s=2"}, "given twice"},
	} {
		r := c.run(t, tc.args...)
		if r.code == 0 || !strings.Contains(r.stderr, tc.says) {
			t.Errorf("%v: exit %d stderr %q, want it to say %q", tc.args, r.code, r.stderr, tc.says)
		}
	}
	expectRequests(t, b)
}

func TestUserShowAndListShowLimits(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		if r.Path == "/v1/users" {
			return 200, `{"users":[` + limitedUser + `]}`
		}
		return 200, limitedUser
	})
	c := against(b)
	r := c.run(t, "user", "show", "batch")
	mustOK(t, r)
	want := "user:                    batch\n" +
		"grants:                  no grants\n" +
		"produce_records_per_s:   1000/s\n" +
		"produce_bytes_per_s:     4194304/s (4.0 MiB/s)\n" +
		"consume_requests_per_s:  unlimited  (the node's default)\n"
	if r.stdout != want {
		t.Errorf("show:\n%s\nwant\n%s", r.stdout, want)
	}
	r = c.run(t, "user", "ls")
	mustOK(t, r)
	if want := "USER   GRANTS  LIMITS\nbatch  -       produce_records_per_s=1000 produce_bytes_per_s=4194304\n"; r.stdout != want {
		t.Errorf("ls:\n%s\nwant\n%s", r.stdout, want)
	}
}
