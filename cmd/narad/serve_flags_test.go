package main

import (
	"context"
	"strings"
	"testing"
)

// TestServeFlagsAreTyped: a bool setting's flag needs no value, and a
// malformed value is refused while flags are parsed, naming the flag,
// before any server starts.
func TestServeFlagsAreTyped(t *testing.T) {
	cfg := captureServer(t, func(context.Context) error { return nil })
	mustOK(t, cli{home: t.TempDir()}.run(t, "server", "start", "--dev", "--security-enabled"))
	if !cfg.Security.Enabled {
		t.Error("--security-enabled alone left security off")
	}
	mustOK(t, cli{}.run(t, "serve", "--security-enabled=false"))
	if cfg.Security.Enabled {
		t.Error("--security-enabled=false left security on")
	}

	captureServer(t, func(context.Context) error { t.Error("server started with a malformed flag"); return nil })
	for _, tc := range []struct {
		flag string
		args []string
	}{
		{"--http-write-timeout", []string{"serve", "--http-write-timeout", "soon"}},
		{"--security-enabled", []string{"serve", "--security-enabled=maybe"}},
		{"--topic-default-partitions", []string{"server", "start", "--topic-default-partitions", "many"}},
	} {
		args, flag := tc.args, tc.flag
		r := cli{}.run(t, args...)
		if r.code != exitError || !strings.Contains(r.stderr, `"`+flag+`"`) {
			t.Errorf("%v: exit %d stderr %q, want the flag %s named", args, r.code, r.stderr, flag)
		}
	}
}

// TestClientFlagsOnlyOnClientCommands: running a broker takes none of the
// flags that point a client at one.
func TestClientFlagsOnlyOnClientCommands(t *testing.T) {
	for _, args := range [][]string{{"serve", "--help"}, {"server", "start", "--help"}} {
		help := cli{}.run(t, args...).stdout
		for _, flag := range []string{"--server", "--password", "--context", "--retry-for", "--ca-file"} {
			if strings.Contains(help, flag) {
				t.Errorf("%v shows %s", args, flag)
			}
		}
		if !strings.Contains(help, "--security-enabled") {
			t.Errorf("%v lacks the settings' flags:\n%s", args, help)
		}
	}
	for _, args := range [][]string{{"topic", "add", "--help"}, {"sub", "--help"}, {"server", "report", "--help"}, {"cluster", "members", "--help"}} {
		help := cli{}.run(t, args...).stdout
		for _, flag := range []string{"--server", "--retry-for", "--context"} {
			if !strings.Contains(help, flag) {
				t.Errorf("%v lacks %s", args, flag)
			}
		}
	}
	if r := (cli{}).run(t, "serve", "--server", "http://x"); r.code != exitError || !strings.Contains(r.stderr, "unknown flag: --server") {
		t.Errorf("serve --server: exit %d stderr %q", r.code, r.stderr)
	}
}
