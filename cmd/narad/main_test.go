package main

import (
	"runtime"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	want := "narad dev (" + runtime.Version() + ")\n"
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := cli{}.run(t, args...)
		if r.code != 0 || r.stdout != want {
			t.Errorf("%v: exit %d stdout %q, want %q", args, r.code, r.stdout, want)
		}
	}
}

func TestTargetResolution(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 200, `{"topics":[]}` })
	other := newBroker(t, func(r req) (int, string) { return 200, `{"topics":[]}` })

	// Flags beat the environment.
	c := cli{env: map[string]string{"NARAD_ADDR": other.srv.URL, "NARAD_USER": "envuser", "NARAD_PASS": "envpass"}}
	mustOK(t, c.run(t, "topic", "ls", "-s", b.srv.URL, "-u", "flaguser", "-p", "flagpass"))
	if got := b.requests(); len(got) != 1 || got[0].Auth != "flaguser:flagpass" {
		t.Fatalf("flag target: %+v", got)
	}
	if len(other.requests()) != 0 {
		t.Fatal("NARAD_ADDR used although --server was given")
	}

	// Environment next, user and password resolved independently.
	mustOK(t, c.run(t, "topic", "ls", "--server", b.srv.URL))
	if got := b.requests(); got[1].Auth != "envuser:envpass" {
		t.Errorf("env credentials: %q", got[1].Auth)
	}
	mustOK(t, c.run(t, "topic", "ls"))
	if got := other.requests(); len(got) != 1 {
		t.Errorf("NARAD_ADDR not used: %+v", got)
	}

	// A password alone means the admin account; nothing means no auth.
	c = cli{env: map[string]string{"NARAD_ADDR": b.srv.URL, "NARAD_PASS": "pw"}}
	mustOK(t, c.run(t, "topic", "ls"))
	mustOK(t, cli{env: map[string]string{"NARAD_ADDR": b.srv.URL}}.run(t, "topic", "ls"))
	if got := b.requests(); got[2].Auth != "admin:pw" || got[3].Auth != "" {
		t.Errorf("auth %q then %q", got[2].Auth, got[3].Auth)
	}

	if tg, err := (&app{}).resolveTarget(); err != nil || tg.server != defaultServer {
		t.Errorf("default server %q, %v", tg.server, err)
	}
}

func TestUnreachableBrokerGetsAdvice(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 200, "" })
	url := b.srv.URL
	b.srv.Close() // nothing listens there any more
	r := cli{env: map[string]string{"NARAD_ADDR": url}}.run(t, "topic", "ls")
	want := "narad: cannot reach a broker at " + url + ": "
	if r.code != 1 || !strings.HasPrefix(r.stderr, want) || !strings.Contains(r.stderr, "narad server start --dev") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
}
