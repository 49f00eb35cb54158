package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeContexts puts a contexts.json into home's default place.
func writeContexts(t *testing.T, home, data string) string {
	t.Helper()
	path := filepath.Join(home, ".config", "narad", "contexts.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const twoContexts = `{"current":"sel","contexts":{
	"sel":{"server":"http://sel:1","user":"seluser","password":"selpass"},
	"other":{"server":"http://other:2","user":"otheruser","password":"otherpass"},
	"bare":{"server":"http://bare:3"},
	"pwonly":{"server":"http://pwonly:4","password":"pwonlypass"}}}`

// TestTargetPrecedence walks each field down the layers on its own:
// flag → environment → --context → selected context → default.
func TestTargetPrecedence(t *testing.T) {
	home := t.TempDir()
	writeContexts(t, home, twoContexts)
	noFile := t.TempDir()
	for _, tc := range []struct {
		name    string
		home    string
		flags   target // typed --server, --user, --password
		context string // --context
		env     map[string]string
		want    target
	}{
		{name: "selected context fills every field", home: home,
			want: target{"http://sel:1", "seluser", "selpass"}},
		{name: "--context beats the selected one", home: home, context: "other",
			want: target{"http://other:2", "otheruser", "otherpass"}},
		{name: "env server over the context", home: home, env: map[string]string{"NARAD_ADDR": "http://env:5"},
			want: target{"http://env:5", "seluser", "selpass"}},
		{name: "env user over the context", home: home, env: map[string]string{"NARAD_USER": "envuser"},
			want: target{"http://sel:1", "envuser", "selpass"}},
		{name: "env password over the context", home: home, env: map[string]string{"NARAD_PASS": "envpass"},
			want: target{"http://sel:1", "seluser", "envpass"}},
		{name: "env over --context too", home: home, context: "other", env: map[string]string{"NARAD_USER": "envuser"},
			want: target{"http://other:2", "envuser", "otherpass"}},
		{name: "flag server over env and context", home: home, flags: target{server: "http://flag:6"},
			env:  map[string]string{"NARAD_ADDR": "http://env:5"},
			want: target{"http://flag:6", "seluser", "selpass"}},
		{name: "flag user over env and context", home: home, flags: target{user: "flaguser"}, context: "other",
			env:  map[string]string{"NARAD_USER": "envuser"},
			want: target{"http://other:2", "flaguser", "otherpass"}},
		{name: "flag password over env and context", home: home, flags: target{password: "flagpass"},
			env:  map[string]string{"NARAD_PASS": "envpass"},
			want: target{"http://sel:1", "seluser", "flagpass"}},
		{name: "context without credentials", home: home, context: "bare",
			want: target{"http://bare:3", "", ""}},
		{name: "a password alone from the context means admin", home: home, context: "pwonly",
			want: target{"http://pwonly:4", "admin", "pwonlypass"}},
		{name: "a password alone from env means admin, context without user", home: home, context: "bare",
			env: map[string]string{"NARAD_PASS": "envpass"}, want: target{"http://bare:3", "admin", "envpass"}},
		{name: "no file: defaults", home: noFile, want: target{defaultServer, "", ""}},
		{name: "no home: defaults", want: target{defaultServer, "", ""}},
		{name: "XDG_CONFIG_HOME is where the file is", home: noFile,
			env:  map[string]string{"XDG_CONFIG_HOME": filepath.Join(home, ".config")},
			want: target{"http://sel:1", "seluser", "selpass"}},
		{name: "a relative XDG_CONFIG_HOME is ignored", home: home,
			env:  map[string]string{"XDG_CONFIG_HOME": "rel"},
			want: target{"http://sel:1", "seluser", "selpass"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &app{
				server: tc.flags.server, user: tc.flags.user, password: tc.flags.password, contextName: tc.context,
				lookupEnv: func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok },
				home:      func() (string, error) { return tc.home, nil },
			}
			got, err := a.resolveTarget()
			if err != nil || got != tc.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestContextReachesTheBroker(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 200, `{"topics":[]}` })
	c := cli{home: t.TempDir(), stdin: "ctx-pass\n"}
	mustOK(t, c.run(t, "ctx", "add", "dev", "--server", b.srv.URL, "--user", "alice", "--password-stdin"))
	mustOK(t, c.run(t, "ctx", "select", "dev"))
	mustOK(t, c.run(t, "topic", "ls"))
	if got := b.requests(); len(got) != 1 || got[0].Auth != "alice:ctx-pass" {
		t.Fatalf("requests %+v", got)
	}
}

func TestContextCommands(t *testing.T) {
	home := t.TempDir()
	c := cli{home: home, stdin: "s3cret-pw\n"}
	for _, step := range []struct {
		args []string
		want string
	}{
		{[]string{"ctx", "add", "prod", "-s", "https://prod:7942", "-u", "alice", "--password-stdin"},
			"saved context prod (https://prod:7942, user alice, password saved)\n"},
		{[]string{"ctx", "add", "dev", "--server", "http://127.0.0.1:7942"},
			"saved context dev (http://127.0.0.1:7942, no user)\n"},
		{[]string{"ctx", "select", "prod"}, "selected context prod (https://prod:7942, user alice, password saved)\n"},
		{[]string{"ctx", "ls"}, "CURRENT  NAME  SERVER                 USER   PASSWORD\n" +
			"         dev   http://127.0.0.1:7942  -      -\n" +
			"*        prod  https://prod:7942      alice  saved\n"},
		{[]string{"ctx", "add", "dev", "-s", "http://dev:1"}, "replaced context dev (http://dev:1, no user)\n"},
		{[]string{"ctx", "rm", "prod"}, "removed context prod\n"},
		{[]string{"ctx", "ls"}, "CURRENT  NAME  SERVER        USER  PASSWORD\n" +
			"         dev   http://dev:1  -     -\n"},
	} {
		r := c.run(t, step.args...)
		mustOK(t, r)
		if r.stdout != step.want {
			t.Errorf("%v:\n got %q\nwant %q", step.args, r.stdout, step.want)
		}
		if strings.Contains(r.stdout+r.stderr, "s3cret-pw") {
			t.Errorf("%v printed the password", step.args)
		}
	}
	path := filepath.Join(home, ".config", "narad", "contexts.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Removing the selected context unselects it.
	want := "{\n  \"contexts\": {\n    \"dev\": {\n      \"server\": \"http://dev:1\"\n    }\n  }\n}\n"
	if string(data) != want {
		t.Errorf("file\n%s\nwant\n%s", data, want)
	}
}

func TestContextFileIsPrivateAndAtomic(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "xdg")
	c := cli{env: map[string]string{"XDG_CONFIG_HOME": dir}, stdin: "pw\n"}
	mustOK(t, c.run(t, "ctx", "add", "a", "-s", "http://a:1", "--password-stdin"))
	mustOK(t, c.run(t, "ctx", "select", "a"))
	for path, mode := range map[string]os.FileMode{
		dir:                         0o700,
		filepath.Join(dir, "narad"): 0o700,
		filepath.Join(dir, "narad", "contexts.json"): 0o600,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), mode)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "narad"))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "narad", "contexts.json"))
	if want := `{
  "current": "a",
  "contexts": {
    "a": {
      "server": "http://a:1",
      "password": "pw"
    }
  }
}
`; string(data) != want {
		t.Errorf("file\n%s\nwant\n%s", data, want)
	}
}

func TestBrokenContextFileIsNamed(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 200, `{"topics":[]}` })
	corrupt := t.TempDir()
	corruptPath := writeContexts(t, corrupt, `{"current":`)
	// A directory where the file should be: unreadable even for root.
	unreadable := t.TempDir()
	unreadablePath := filepath.Join(unreadable, ".config", "narad", "contexts.json")
	if err := os.MkdirAll(unreadablePath, 0o700); err != nil {
		t.Fatal(err)
	}
	dangling := t.TempDir()
	danglingPath := writeContexts(t, dangling, `{"current":"gone","contexts":{}}`)
	for _, tc := range []struct {
		home string
		args []string
		want string
	}{
		{corrupt, []string{"topic", "ls"}, "narad: contexts file " + corruptPath + " is not valid: "},
		{corrupt, []string{"ctx", "ls"}, "narad: contexts file " + corruptPath + " is not valid: "},
		{corrupt, []string{"ctx", "add", "x", "-s", "http://x"}, "narad: contexts file " + corruptPath + " is not valid: "},
		{unreadable, []string{"topic", "ls"}, "narad: reading contexts file: read " + unreadablePath + ": "},
		{dangling, []string{"topic", "ls"}, "narad: the selected context \"gone\" is missing from " + danglingPath},
		{dangling, []string{"topic", "ls", "--context", "nope"}, "narad: no context \"nope\" in " + danglingPath},
		{dangling, []string{"ctx", "select", "nope"}, "narad: no context \"nope\" in " + danglingPath},
		{dangling, []string{"ctx", "rm", "nope"}, "narad: no context \"nope\" in " + danglingPath},
	} {
		r := cli{home: tc.home}.run(t, tc.args...)
		code := exitError
		if strings.HasPrefix(tc.want, "narad: no context") {
			code = exitNotFound
		}
		if r.code != code || !strings.HasPrefix(r.stderr, tc.want) {
			t.Errorf("%v: exit %d stderr %q, want %d and prefix %q", tc.args, r.code, r.stderr, code, tc.want)
		}
	}
	// Fully explicit calls never read the file, so it cannot get in the way.
	r := cli{home: corrupt}.run(t, "topic", "ls", "-s", b.srv.URL, "-u", "u", "-p", "p")
	mustOK(t, r)
}

func TestContextAddRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ctx", "add", "x"}, "narad: --server is required\n"},
		{[]string{"ctx", "add", "x", "-s", "http://x", "-p", "pw"}, "narad: a saved password is read with --password-stdin, not given with --password\n"},
		{[]string{"ctx", "add", "", "-s", "http://x"}, "narad: a context needs a name\n"},
		{[]string{"ctx", "add", "x", "-s", "ftp://x:7942"}, "narad: --server \"ftp://x:7942\": the scheme must be http or https, not \"ftp\"\n"},
		{[]string{"ctx", "add", "x", "-s", "htp://x:7942"}, "narad: --server \"htp://x:7942\": the scheme must be http or https, not \"htp\"\n"},
		{[]string{"ctx", "add", "x", "-s", "x:7942"}, "narad: --server \"x:7942\" is not a URL: want http://HOST:PORT or https://HOST:PORT (did you mean http://x:7942?)\n"},
		{[]string{"ctx", "add", "x", "-s", "https://"}, "narad: --server \"https://\" has no host: want http://HOST:PORT or https://HOST:PORT\n"},
	} {
		home := t.TempDir()
		r := cli{home: home}.run(t, tc.args...)
		if r.code != 1 || r.stderr != tc.want {
			t.Errorf("%v: exit %d stderr %q", tc.args, r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(home, ".config")); err == nil {
			t.Errorf("%v wrote a file", tc.args)
		}
	}
	if r := (cli{}).run(t, "ctx", "ls"); r.code != 1 || r.stderr != "narad: cannot locate contexts.json: set XDG_CONFIG_HOME or HOME\n" {
		t.Errorf("no home: exit %d stderr %q", r.code, r.stderr)
	}
}
