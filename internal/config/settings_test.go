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
	if len(keys) != 52 {
		t.Errorf("want 52 settings, got %d", len(keys))
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

// TestSettingKindsAndCheck: the CLI types its serve flags by Kind (a bool
// flag needs no value) and checks a typed value with CheckSetting.
func TestSettingKindsAndCheck(t *testing.T) {
	kinds := map[string]string{}
	for _, s := range Settings() {
		kinds[s.Key] = s.Kind
	}
	for key, want := range map[string]string{
		"security.enabled": KindBool, "storage.skip_corrupt": KindBool, "http.addr": KindString,
		"topic.default_partitions": KindInt, "storage.disk_reserve_bytes": KindInt, "http.read_timeout": KindDuration,
		"fanout.linger_ms": KindDuration, "cluster.peers": KindList, "cluster.initial_members": KindList,
	} {
		if kinds[key] != want {
			t.Errorf("%s: kind %q, want %q", key, kinds[key], want)
		}
	}
	if err := CheckSetting("security.enabled", "maybe"); err == nil {
		t.Error(`security.enabled "maybe" passed the check`)
	}
	for key, text := range map[string]string{"security.enabled": "true", "fanout.linger_ms": "25", "http.read_timeout": "10s"} {
		if err := CheckSetting(key, text); err != nil {
			t.Errorf("%s %q: %v", key, text, err)
		}
	}
	if err := CheckSetting("no.such", "x"); err == nil {
		t.Error("an unknown setting passed the check")
	}
}
