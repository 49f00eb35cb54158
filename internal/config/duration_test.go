package config

import (
	"testing"
	"time"
)

// Settings read durations with the syntax the CLI's flags and the API use
// (package duration): days, and for *_ms settings bare milliseconds, with
// the space of hand-typed text trimmed.
func TestDurationSettingsShareTheSyntax(t *testing.T) {
	c, err := Load(LoadArgs{LookupEnv: env(map[string]string{
		"NARAD_HTTP_IDLE_TIMEOUT": " 1d ",
		"NARAD_FANOUT_LINGER_MS":  "1500",
	}), Flags: map[string]string{"http.shutdown_grace": "1m30s"}})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, c.HTTP.IdleTimeout, 24*time.Hour)
	eq(t, c.Fanout.Linger, 1500*time.Millisecond)
	eq(t, c.HTTP.ShutdownGrace, 90*time.Second)
}
