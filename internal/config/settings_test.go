package config

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestSettingsTableIsConsistent(t *testing.T) {
	keys, envs := map[string]bool{}, map[string]bool{}
	for _, s := range Settings() {
		if keys[s.Key] || envs[s.Env] {
			t.Errorf("duplicate setting %s / %s", s.Key, s.Env)
		}
		keys[s.Key], envs[s.Env] = true, true
		if !strings.HasPrefix(s.Env, "NARAD_") {
			t.Errorf("%s: env %s lacks the NARAD_ prefix", s.Key, s.Env)
		}
		if s.Usage == "" {
			t.Errorf("%s has no usage text", s.Key)
		}
	}
	if len(keys) != 41 {
		t.Errorf("want 41 settings, got %d", len(keys))
	}
}

// Every default, printed the way help shows it, must parse back to itself;
// otherwise the help would advertise a value the loader rejects.
func TestSettingFormatRoundTrips(t *testing.T) {
	def := Default()
	def.Cluster.Peers = []Peer{{"n1", "h1:1"}, {"n2", "h2:2"}}
	def.Cluster.InitialMembers = []string{"n1", "n2"}
	for _, s := range settings {
		if s.secret {
			continue
		}
		var c Config
		if err := s.set(&c, s.format(&def)); err != nil {
			t.Errorf("%s: default %q does not parse: %v", s.key, s.format(&def), err)
			continue
		}
		got := reflect.ValueOf(s.field(&c)).Elem().Interface()
		want := reflect.ValueOf(s.field(&def)).Elem().Interface()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: round trip gave %#v, want %#v", s.key, got, want)
		}
	}
}

func TestNewLogger(t *testing.T) {
	var buf bytes.Buffer
	c := Default()
	c.Log = LogConfig{Level: "warn", Format: "json"}
	log := NewLoggerTo(&buf, c)
	log.Info("hidden")
	log.Warn("shown", "k", 1)
	if strings.Contains(buf.String(), "hidden") || !strings.Contains(buf.String(), `"msg":"shown"`) {
		t.Fatalf("json logger at warn wrote %q", buf.String())
	}

	buf.Reset()
	c.Log = LogConfig{Level: "debug", Format: "text"}
	NewLoggerTo(&buf, c).Debug("dbg")
	if !strings.Contains(buf.String(), "level=DEBUG msg=dbg") {
		t.Fatalf("text logger at debug wrote %q", buf.String())
	}
}
