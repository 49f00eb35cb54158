package config

import (
	"strings"
	"testing"
)

// The developer preset turns authentication off because it listens on
// loopback only: an address on top of it that is not loopback is refused,
// naming the setting; with authentication turned back on it is allowed.
func TestDevListensOnLoopbackOnly(t *testing.T) {
	for _, c := range []struct {
		env     map[string]string
		refused string // "" when loaded
	}{
		{map[string]string{"NARAD_HTTP_ADDR": "127.0.0.1:9000"}, ""},
		{map[string]string{"NARAD_HTTP_ADDR": "localhost:9000", "NARAD_CLUSTER_ADDR": "[::1]:9001"}, ""},
		{map[string]string{"NARAD_HTTP_ADDR": "0.0.0.0:7942"}, "NARAD_HTTP_ADDR"},
		{map[string]string{"NARAD_HTTP_ADDR": ":7942"}, "NARAD_HTTP_ADDR"},
		{map[string]string{"NARAD_CLUSTER_ADDR": "10.1.2.3:7943"}, "NARAD_CLUSTER_ADDR"},
		{map[string]string{"NARAD_HTTP_ADDR": "0.0.0.0:7942", "NARAD_SECURITY_ENABLED": "true", "NARAD_ADMIN_PASSWORD": "correct horse battery"}, ""},
	} {
		_, err := Load(LoadArgs{Dev: true, Home: t.TempDir(), LookupEnv: env(c.env)})
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("%v: %v, want it loaded", c.env, err)
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused) || !strings.Contains(err.Error(), "loopback")):
			t.Errorf("%v: %v, want a refusal naming %s and loopback", c.env, err, c.refused)
		}
	}
	// Without the preset, an operator who turns authentication off
	// chooses it: not this rule's business.
	if _, err := Load(LoadArgs{Home: t.TempDir(), LookupEnv: env(map[string]string{"NARAD_HTTP_ADDR": "0.0.0.0:7942",
		"NARAD_SECURITY_ENABLED": "false", "NARAD_NODE_ID": "n1", "NARAD_DATA_DIR": t.TempDir()})}); err != nil && strings.Contains(err.Error(), "loopback") {
		t.Errorf("without --dev: %v", err)
	}
}
