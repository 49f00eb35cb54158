package main

import (
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersion: a source build says what it was built from, from the
// build info Go records (the test binary records none, so it is given
// what "go build" in a git checkout records); a release's -X version wins.
func TestVersion(t *testing.T) {
	orig := readBuildInfo
	t.Cleanup(func() { readBuildInfo, version = orig, "" })
	readBuildInfo = func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/narad-io/narad", Version: "v0.0.0-20261201115324-f8ca7c36fffc+dirty"},
			Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "f8ca7c36fffc576ec990693750566bced84eb8da"},
				{Key: "vcs.time", Value: "2026-12-01T11:53:24Z"}, {Key: "vcs.modified", Value: "true"}}}, true
	}
	want := "narad v0.0.0-20261201115324-f8ca7c36fffc+dirty (commit f8ca7c36fffc, 2026-12-01T11:53:24Z, modified, " + runtime.Version() + ")\n"
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := cli{}.run(t, args...)
		if r.code != 0 || r.stdout != want {
			t.Errorf("%v: exit %d stdout %q, want %q", args, r.code, r.stdout, want)
		}
	}
	r := cli{}.run(t, "version", "-o", "json")
	var got buildInfo
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || got.Commit != "f8ca7c36fffc576ec990693750566bced84eb8da" || !got.Modified {
		t.Errorf("json %q: %+v %v", r.stdout, got, err)
	}

	version = "1.2.3"
	if r := (cli{}).run(t, "version"); !strings.HasPrefix(r.stdout, "narad 1.2.3 (commit f8ca7c36fffc") {
		t.Errorf("-X version: %q", r.stdout)
	}
	version = ""
	readBuildInfo = func() (*debug.BuildInfo, bool) { return &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true }
	if r := (cli{}).run(t, "version"); r.stdout != "narad devel ("+runtime.Version()+")\n" {
		t.Errorf("no build info: %q", r.stdout)
	}
	// The image is built without .git: its commit is stamped (-X
	// main.revision, the Dockerfile's REVISION), and reported.
	version, revision = "0.1.0", "0123456789abcdef0123456789abcdef01234567"
	t.Cleanup(func() { revision = "" })
	if r := (cli{}).run(t, "version"); r.stdout != "narad 0.1.0 (commit 0123456789ab, "+runtime.Version()+")\n" {
		t.Errorf("-X revision: %q", r.stdout)
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
