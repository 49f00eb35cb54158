package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestBasicAuthInClear(t *testing.T) {
	for _, tc := range []struct {
		security, tls bool
		addr          string
		want          bool
	}{
		{true, false, "0.0.0.0:7942", true},
		{true, false, "[::]:7942", true},
		{true, false, ":7942", true},
		{true, false, "10.1.2.3:7942", true},
		{true, false, "[fd00::1]:7942", true},
		{true, false, "narad.example:7942", true},
		{true, false, "127.0.0.1:7942", false},
		{true, false, "127.0.0.2:7942", false},
		{true, false, "[::1]:7942", false},
		{true, false, "localhost:7942", false},
		{true, true, "0.0.0.0:7942", false},   // HTTPS
		{false, false, "0.0.0.0:7942", false}, // no passwords to read
	} {
		if got := basicAuthInClear(tc.security, tc.tls, tc.addr); got != tc.want {
			t.Errorf("basicAuthInClear(security=%v, tls=%v, %q) = %v, want %v", tc.security, tc.tls, tc.addr, got, tc.want)
		}
	}
}

func TestWarnBasicAuthInClearNamesTheFix(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	warnBasicAuthInClear(true, false, "127.0.0.1:7942", log)
	if buf.Len() != 0 {
		t.Fatalf("warned on loopback: %s", buf.String())
	}
	warnBasicAuthInClear(true, false, "[::]:7942", log)
	if out := buf.String(); strings.Count(out, "\n") != 1 || !strings.Contains(out, "level=WARN") ||
		!strings.Contains(out, "NARAD_HTTP_TLS_CERT_FILE") || !strings.Contains(out, "[::]:7942") {
		t.Fatalf("want one warning naming the address and the TLS settings, got %q", out)
	}
}
