package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/config"
)

// captureServer swaps serverRun for one that records the configuration and
// returns ret. Tests using it must not run in parallel.
func captureServer(t *testing.T, ret func(ctx context.Context) error) *config.Config {
	t.Helper()
	var got config.Config
	orig := serverRun
	serverRun = func(ctx context.Context, cfg config.Config) error {
		got = cfg
		return ret(ctx)
	}
	t.Cleanup(func() { serverRun = orig })
	return &got
}

func TestServeLayersFlagsOverEnvironment(t *testing.T) {
	cfg := captureServer(t, func(context.Context) error { return nil })
	c := cli{env: map[string]string{
		"NARAD_HTTP_ADDR":         ":1111",
		"NARAD_LOG_LEVEL":         "debug",
		"NARAD_ADMIN_PASSWORD":    "admin-pw-1",
		"NARAD_CLUSTER_SECRET":    "s",
		"NARAD_CLUSTER_ADVERTISE": "10.0.0.1:7943",
	}}
	mustOK(t, c.run(t, "serve", "--http-addr", "127.0.0.1:0", "--data-dir", "/var/lib/narad", "--node-id", "n1",
		"--peers", "n2@10.0.0.2:7943", "--http-write-timeout", "45s"))
	if cfg.HTTP.Addr != "127.0.0.1:0" || cfg.DataDir != "/var/lib/narad" || cfg.NodeID != "n1" ||
		len(cfg.Cluster.Peers) != 1 || cfg.Cluster.Peers[0] != (config.Peer{ID: "n2", Addr: "10.0.0.2:7943"}) ||
		cfg.HTTP.WriteTimeout != 45*time.Second {
		t.Errorf("flags not applied: %+v", cfg)
	}
	if cfg.Log.Level != "debug" || cfg.Security.AdminPassword != "admin-pw-1" || cfg.Cluster.Secret != "s" {
		t.Errorf("environment lost under unset flags: %+v", cfg)
	}
	if cfg.Dev {
		t.Error("serve must not be in dev mode")
	}
}

func TestServeConfigErrors(t *testing.T) {
	captureServer(t, func(context.Context) error { t.Error("server started with a bad configuration"); return nil })
	r := cli{}.run(t, "serve", "--http-write-timeout", "5s")
	if r.code != 1 || !strings.Contains(r.stderr, "narad: invalid configuration: http.write_timeout") {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
	r = cli{}.run(t, "serve", "--config", filepath.Join(t.TempDir(), "missing.json"))
	if r.code != 1 || !strings.Contains(r.stderr, "narad: config file") {
		t.Errorf("missing file: exit %d stderr %q", r.code, r.stderr)
	}
}

func TestServerStartDev(t *testing.T) {
	cfg := captureServer(t, func(context.Context) error { return nil })
	home := t.TempDir()
	c := cli{home: home, env: map[string]string{}}
	mustOK(t, c.run(t, "server", "start", "--dev", "--log-level", "warn"))
	if !cfg.Dev || cfg.HTTP.Addr != "127.0.0.1:7942" || cfg.Cluster.Addr != "127.0.0.1:7943" || cfg.Security.Enabled ||
		cfg.DataDir != filepath.Join(home, ".narad", "data") || cfg.Log.Format != "text" || cfg.Log.Level != "warn" {
		t.Errorf("dev config %+v", cfg)
	}
}

func TestServeReportsServerFailure(t *testing.T) {
	captureServer(t, func(context.Context) error { return errors.New("data dir locked by another process") })
	r := cli{}.run(t, "serve")
	if r.code != 1 || r.stderr != "narad: data dir locked by another process\n" {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
}

func TestServeStopsCleanlyOnSignal(t *testing.T) {
	captureServer(t, func(ctx context.Context) error {
		// The handler is installed before serverRun is called, so this
		// SIGINT is caught and turned into a cancelled ctx.
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGINT); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Second):
			return errors.New("SIGINT did not cancel the context")
		}
	})
	r := cli{}.run(t, "server", "start")
	if r.code != 0 {
		t.Fatalf("exit %d stderr %q: a signal is a clean shutdown", r.code, r.stderr)
	}
}

func TestSettingFlagNames(t *testing.T) {
	for key, want := range map[string]string{
		"http.addr":                      "http-addr",
		"data_dir":                       "data-dir",
		"node_id":                        "node-id",
		"cluster.addr":                   "cluster-addr",
		"cluster.peers":                  "peers",
		"log.level":                      "log-level",
		"topic.default_retention_age_ms": "topic-default-retention-age-ms",
	} {
		if got := settingFlag(key); got != want {
			t.Errorf("settingFlag(%q) = %q, want %q", key, got, want)
		}
	}
}
