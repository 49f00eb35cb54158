package clustertls

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadRefusesWhatIsNotThere(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.pem")
	os.WriteFile(junk, []byte("not a certificate"), 0o600)
	for _, tc := range []struct {
		cert, key, ca, want string
	}{
		{filepath.Join(dir, "missing.pem"), junk, junk, "certificate"},
		{junk, junk, junk, "certificate"},
	} {
		if _, err := Load(tc.cert, tc.key, tc.ca); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Load(%s, %s, %s) = %v, want an error about the %s", tc.cert, tc.key, tc.ca, err, tc.want)
		}
	}
}

// The server side requires and verifies a client certificate; both sides
// refuse anything below TLS 1.2.
func TestConfigIsMutual(t *testing.T) {
	dir := t.TempDir()
	cert, key, ca := writeSelfSigned(t, dir)
	cfg, err := Load(cert, key, ca)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.ClientAuth != tls.RequireAndVerifyClientCert || cfg.Server.ClientCAs == nil ||
		cfg.Client.RootCAs == nil || len(cfg.Client.Certificates) != 1 ||
		cfg.Server.MinVersion < tls.VersionTLS12 || cfg.Client.MinVersion < tls.VersionTLS12 {
		t.Fatalf("not mutual TLS: %+v %+v", cfg.Server, cfg.Client)
	}
}
