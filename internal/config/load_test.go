package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// env returns a LookupEnv over a fixed map so tests never read the
// machine's environment.
func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "narad.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadLayering(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		env   map[string]string
		flags map[string]string
		check func(t *testing.T, c Config)
	}{
		{
			name: "defaults",
			check: func(t *testing.T, c Config) {
				want := Default()
				want.Security.AdminPassword = c.Security.AdminPassword
				want.Security.AdminPasswordGenerated = true
				want.NodeIDDefaulted = true
				if !reflect.DeepEqual(c, want) {
					t.Errorf("got %+v\nwant %+v", c, want)
				}
			},
		},
		{
			name: "rate limit defaults from file and environment",
			file: `{"limits": {"produce_records_per_s": 100, "consume_requests_per_s": 5}}`,
			env:  map[string]string{"NARAD_LIMITS_PRODUCE_BYTES_PER_S": "1048576", "NARAD_LIMITS_CONSUME_REQUESTS_PER_S": "7"},
			check: func(t *testing.T, c Config) {
				eq(t, c.Limits, LimitsConfig{ProduceRecordsPerS: 100, ProduceBytesPerS: 1 << 20, ConsumeRequestsPerS: 7})
			},
		},
		{
			name: "a configured node id is not defaulted",
			env:  map[string]string{"NARAD_NODE_ID": "n7"},
			check: func(t *testing.T, c Config) {
				eq(t, c.NodeID, "n7")
				eq(t, c.NodeIDDefaulted, false)
			},
		},
		{
			name: "file beats default",
			file: `{"http":{"addr":":1000","read_timeout":"3s"},"topic":{"default_retention_age_ms":3600000},"data_dir":"fromfile"}`,
			check: func(t *testing.T, c Config) {
				eq(t, c.HTTP.Addr, ":1000")
				eq(t, c.HTTP.ReadTimeout, 3*time.Second)
				eq(t, c.Topic.DefaultRetentionAge, time.Hour)
				eq(t, c.DataDir, "fromfile")
				eq(t, c.HTTP.WriteTimeout, 30*time.Second) // untouched
			},
		},
		{
			name:  "the skip-corrupt switch from file, environment or flag",
			file:  `{"storage":{"skip_corrupt":true}}`,
			check: func(t *testing.T, c Config) { eq(t, c.Storage.SkipCorrupt, true) },
		},
		{
			name:  "skip-corrupt: flag beats env",
			env:   map[string]string{"NARAD_STORAGE_SKIP_CORRUPT": "true"},
			flags: map[string]string{"storage.skip_corrupt": "false"},
			check: func(t *testing.T, c Config) { eq(t, c.Storage.SkipCorrupt, false) },
		},
		{
			name:  "heal after from env, in milliseconds; 0 turns healing off",
			env:   map[string]string{"NARAD_REPLICATION_HEAL_AFTER_MS": "2000"},
			check: func(t *testing.T, c Config) { eq(t, c.Replication.HealAfter, 2*time.Second) },
		},
		{
			name:  "journal delay from env, as a duration under a millisecond; none by default",
			env:   map[string]string{"NARAD_STORAGE_JOURNAL_DELAY_MS": "300us"},
			check: func(t *testing.T, c Config) { eq(t, c.Storage.JournalDelay, 300*time.Microsecond) },
		},
		{
			name:  "journal delay off by default",
			check: func(t *testing.T, c Config) { eq(t, c.Storage.JournalDelay, time.Duration(0)) },
		},
		{
			name:  "framed node RPC on by default",
			check: func(t *testing.T, c Config) { eq(t, c.Cluster.FramedRPC, true) },
		},
		{
			name:  "framed node RPC off from env",
			env:   map[string]string{"NARAD_CLUSTER_FRAMED_RPC": "false"},
			check: func(t *testing.T, c Config) { eq(t, c.Cluster.FramedRPC, false) },
		},
		{
			name:  "heal after from file, as a duration",
			file:  `{"replication":{"heal_after_ms":"0s"}}`,
			check: func(t *testing.T, c Config) { eq(t, c.Replication.HealAfter, time.Duration(0)) },
		},
		{
			name:  "skip-corrupt from env",
			env:   map[string]string{"NARAD_STORAGE_SKIP_CORRUPT": "true"},
			check: func(t *testing.T, c Config) { eq(t, c.Storage.SkipCorrupt, true) },
		},
		{
			name: "env beats file",
			file: `{"http":{"addr":":1000"},"topic":{"default_retention_age_ms":"1h"}}`,
			env:  map[string]string{"NARAD_HTTP_ADDR": ":2000", "NARAD_TOPIC_DEFAULT_RETENTION_AGE_MS": "90m"},
			check: func(t *testing.T, c Config) {
				eq(t, c.HTTP.Addr, ":2000")
				eq(t, c.Topic.DefaultRetentionAge, 90*time.Minute)
			},
		},
		{
			name: "flag beats env and file",
			file: `{"http":{"addr":":1000"},"cluster":{"peers":["a@h1:1","b@h2:2"]}}`,
			env: map[string]string{"NARAD_HTTP_ADDR": ":2000", "NARAD_CLUSTER_PEERS": "c@h3:3", "NARAD_CLUSTER_SECRET": "s",
				"NARAD_CLUSTER_ADVERTISE": "h0:7943"},
			flags: map[string]string{"http.addr": ":3000", "cluster.peers": "d@h4:4,e@h5:5"},
			check: func(t *testing.T, c Config) {
				eq(t, c.HTTP.Addr, ":3000")
				eq(t, c.Cluster.Peers, []Peer{{"d", "h4:4"}, {"e", "h5:5"}})
			},
		},
		{
			name:  "the consume answer cap from the file, the environment and a flag",
			file:  `{"http":{"max_consume_bytes":1048576}}`,
			env:   map[string]string{"NARAD_HTTP_MAX_CONSUME_BYTES": "2097152"},
			flags: map[string]string{"http.max_consume_bytes": "4194304"},
			check: func(t *testing.T, c Config) {
				eq(t, c.HTTP.MaxConsumeBytes, int64(4<<20))
			},
		},
		{
			name: "h2c on by default",
			check: func(t *testing.T, c Config) {
				eq(t, c.HTTP.H2C, true)
			},
		},
		{
			name: "h2c off in the file",
			file: `{"http":{"h2c":false}}`,
			check: func(t *testing.T, c Config) {
				eq(t, c.HTTP.H2C, false)
			},
		},
		{
			name: "h2c off in the environment",
			env:  map[string]string{"NARAD_HTTP_H2C": "false"},
			check: func(t *testing.T, c Config) {
				eq(t, c.HTTP.H2C, false)
			},
		},
		{
			name:  "an unset flag does not mask the environment",
			env:   map[string]string{"NARAD_DATA_DIR": "/srv/narad"},
			flags: map[string]string{"http.addr": ":3000"},
			check: func(t *testing.T, c Config) {
				eq(t, c.DataDir, "/srv/narad")
				eq(t, c.HTTP.Addr, ":3000")
			},
		},
		{
			name: "every kind of value from the environment",
			env: map[string]string{
				"NARAD_TOPIC_DEFAULT_PARTITIONS":     "7",
				"NARAD_FANOUT_MAX_BATCH_BYTES":       "1024",
				"NARAD_SECURITY_ENABLED":             "false",
				"NARAD_FANOUT_LINGER_MS":             "5",
				"NARAD_STORAGE_IDLE_LOG_EVICTION_MS": "0",
				"NARAD_CLUSTER_INITIAL_MEMBERS":      "n1, n2",
				"NARAD_NODE_ID":                      "n1",
				"NARAD_CLUSTER_PEERS":                "n1@10.0.0.1:7943,n2@10.0.0.2:7943",
				"NARAD_STORAGE_CODEC":                "zstd",
				"NARAD_STORAGE_COMPRESSION_LEVEL":    "best",
				"NARAD_LOG_LEVEL":                    "debug",
				"NARAD_LOG_FORMAT":                   "text",
			},
			check: func(t *testing.T, c Config) {
				eq(t, c.Topic.DefaultPartitions, 7)
				eq(t, c.Fanout.MaxBatchBytes, int64(1024))
				eq(t, c.Security.Enabled, false)
				eq(t, c.Fanout.Linger, 5*time.Millisecond)
				eq(t, c.Storage.IdleLogEviction, time.Duration(0))
				eq(t, c.Cluster.InitialMembers, []string{"n1", "n2"})
				eq(t, c.Storage.Codec, "zstd")
				eq(t, c.Storage.CompressionLevel, "best")
				eq(t, c.Log, LogConfig{Level: "debug", Format: "text"})
				eq(t, c.Security.AdminPassword, "") // security off: none generated
			},
		},
		{
			name: "secrets from the environment",
			env: map[string]string{
				"NARAD_ADMIN_PASSWORD": "hunter22",
				"NARAD_CLUSTER_SECRET": "s3cret",
				"NARAD_NODE_ID":        "n1",
				"NARAD_CLUSTER_PEERS":  "n1@10.0.0.1:7943,n2@10.0.0.2:7943",
			},
			check: func(t *testing.T, c Config) {
				eq(t, c.Security.AdminPassword, "hunter22")
				eq(t, c.Security.AdminPasswordGenerated, false)
				eq(t, c.Cluster.Secret, "s3cret")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := LoadArgs{Flags: tt.flags, LookupEnv: env(tt.env)}
			if tt.file != "" {
				args.File = writeFile(t, tt.file)
			}
			c, err := Load(args)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			tt.check(t, c)
		})
	}
}

func TestLoadGeneratesAdminPassword(t *testing.T) {
	a, err := Load(LoadArgs{LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(LoadArgs{LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Security.AdminPasswordGenerated || len(a.Security.AdminPassword) < 16 {
		t.Fatalf("want a generated password of at least 16 chars, got %q (generated=%v)", a.Security.AdminPassword, a.Security.AdminPasswordGenerated)
	}
	if a.Security.AdminPassword == b.Security.AdminPassword {
		t.Fatalf("two loads generated the same password %q", a.Security.AdminPassword)
	}
}

func TestLoadDev(t *testing.T) {
	home := t.TempDir()
	c, err := Load(LoadArgs{Dev: true, Home: home, LookupEnv: env(map[string]string{"NARAD_LOG_FORMAT": "json"})})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, c.Dev, true)
	eq(t, c.HTTP.Addr, "127.0.0.1:7942")
	eq(t, c.Cluster.Addr, "127.0.0.1:7943")
	eq(t, c.Security.Enabled, false)
	eq(t, c.DataDir, filepath.Join(home, ".narad", "data"))
	eq(t, c.Log.Format, "json") // the environment still wins over the preset

	if _, err := Load(LoadArgs{Dev: true, LookupEnv: env(nil)}); err == nil {
		t.Fatal("dev without a home directory: want an error")
	}
}

func TestLoadFileErrors(t *testing.T) {
	tests := []struct {
		name, file, want string
	}{
		{"unknown key in a section", `{"http":{"adr":":1"}}`, `unknown key "http.adr"`},
		{"unknown top-level key", `{"nodeid":"x"}`, `unknown key "nodeid"`},
		{"unknown key deep in a known section", `{"storage":{"codec":"none","segmentbytes":1}}`, `unknown key "storage.segmentbytes"`},
		{"cluster secret in file", `{"cluster":{"secret":"x"}}`, "cluster.secret is a secret and is read from the environment only (NARAD_CLUSTER_SECRET)"},
		{"admin password in file", `{"security":{"admin_password":"x"}}`, "security.admin_password is a secret and is read from the environment only (NARAD_ADMIN_PASSWORD)"},
		{"section not an object", `{"http":":7942"}`, "http: must be an object"},
		{"string where a duration string is needed", `{"http":{"read_timeout":10}}`, `http.read_timeout: want a duration string like "10s"`},
		{"number where a string is needed", `{"http":{"addr":7942}}`, "http.addr: want a string"},
		{"string where an integer is needed", `{"topic":{"default_partitions":"3"}}`, "topic.default_partitions: want an integer"},
		{"bad duration text", `{"http":{"idle_timeout":"soon"}}`, `http.idle_timeout: "soon" is not a duration`},
		{"bad peers in file", `{"cluster":{"peers":["n1@h"]}}`, `cluster.peers: peer "n1@h"`},
		{"trailing data", `{"node_id":"a"} {"node_id":"b"}`, "unexpected data after the JSON object"},
		{"not JSON", `node_id = "a"`, "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.file)
			_, err := Load(LoadArgs{File: path, LookupEnv: env(nil)})
			if err == nil {
				t.Fatalf("want error containing %q, got nil", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q: want it to contain %q and the file path", err, tt.want)
			}
		})
	}
	if _, err := Load(LoadArgs{File: filepath.Join(t.TempDir(), "missing.json"), LookupEnv: env(nil)}); err == nil {
		t.Fatal("missing file: want an error")
	}
}

func TestLoadRefusesSecretFlags(t *testing.T) {
	for _, key := range []string{"cluster.secret", "security.admin_password"} {
		_, err := Load(LoadArgs{Flags: map[string]string{key: "x"}, LookupEnv: env(nil)})
		if err == nil || !strings.Contains(err.Error(), "environment only") {
			t.Errorf("flag %s: want an environment-only error, got %v", key, err)
		}
	}
	_, err := Load(LoadArgs{Flags: map[string]string{"no.such": "x"}, LookupEnv: env(nil)})
	if err == nil || !strings.Contains(err.Error(), `"no.such"`) {
		t.Errorf("unknown flag key: want an error naming it, got %v", err)
	}
}

func TestLoadBadValues(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"duration without unit", map[string]string{"NARAD_HTTP_READ_TIMEOUT": "10"}, `environment NARAD_HTTP_READ_TIMEOUT: "10" is not a duration`},
		{"millis garbage", map[string]string{"NARAD_FANOUT_LINGER_MS": "soon"}, `environment NARAD_FANOUT_LINGER_MS: "soon" is neither milliseconds nor a duration`},
		{"not an integer", map[string]string{"NARAD_TOPIC_DEFAULT_PARTITIONS": "abc"}, `"abc" is not an integer`},
		{"empty integer", map[string]string{"NARAD_TOPIC_DEFAULT_PARTITIONS": ""}, `"" is not an integer`},
		{"not a boolean", map[string]string{"NARAD_SECURITY_ENABLED": "maybe"}, `"maybe" is not a boolean`},
		{"unknown codec", map[string]string{"NARAD_STORAGE_CODEC": "lz4"}, `storage.codec (NARAD_STORAGE_CODEC) must be one of none|zstd, got "lz4"`},
		{"unknown level", map[string]string{"NARAD_LOG_LEVEL": "loud"}, "log.level (NARAD_LOG_LEVEL) must be one of debug|info|warn|error"},
		{"unknown format", map[string]string{"NARAD_LOG_FORMAT": "xml"}, "log.format (NARAD_LOG_FORMAT) must be one of json|text"},
		{"unknown orphan policy", map[string]string{"NARAD_RECOVERY_ORPHAN_DATA": "delete"}, `recovery.orphan_data (NARAD_RECOVERY_ORPHAN_DATA) must be one of refuse|adopt|discard, got "delete"`},
		{"compression level", map[string]string{"NARAD_STORAGE_COMPRESSION_LEVEL": "max"}, "storage.compression_level"},
		{"write timeout not above consume wait", map[string]string{"NARAD_HTTP_WRITE_TIMEOUT": "10s"}, "http.write_timeout (NARAD_HTTP_WRITE_TIMEOUT) = 10s must exceed http.max_consume_wait = 10s plus 5s"},
		{"write timeout without room for a forward", map[string]string{"NARAD_HTTP_WRITE_TIMEOUT": "15s"}, "= 15s must exceed http.max_consume_wait = 10s plus 5s"},
		{"consume wait raised past write timeout", map[string]string{"NARAD_HTTP_MAX_CONSUME_WAIT": "45s"}, "must exceed http.max_consume_wait = 45s"},
		{"consume bytes zero", map[string]string{"NARAD_HTTP_MAX_CONSUME_BYTES": "0"}, "http.max_consume_bytes (NARAD_HTTP_MAX_CONSUME_BYTES) must be between 1 and 33554432, got 0"},
		{"consume bytes past a node RPC message", map[string]string{"NARAD_HTTP_MAX_CONSUME_BYTES": "67108864"}, "must be between 1 and 33554432, got 67108864"},
		{"partitions above max", map[string]string{"NARAD_TOPIC_DEFAULT_PARTITIONS": "200"}, "topic.default_partitions (NARAD_TOPIC_DEFAULT_PARTITIONS) must be between 1 and 108, got 200"},
		{"zero partitions", map[string]string{"NARAD_TOPIC_DEFAULT_PARTITIONS": "0"}, "must be between 1 and 108, got 0"},
		{"negative heal after", map[string]string{"NARAD_REPLICATION_HEAL_AFTER_MS": "-1"}, "replication.heal_after_ms (NARAD_REPLICATION_HEAL_AFTER_MS) must not be negative"},
		{"negative linger", map[string]string{"NARAD_FANOUT_LINGER_MS": "-1"}, "fanout.linger_ms (NARAD_FANOUT_LINGER_MS) must not be negative"},
		{"negative journal delay", map[string]string{"NARAD_STORAGE_JOURNAL_DELAY_MS": "-1"}, "storage.journal_delay_ms (NARAD_STORAGE_JOURNAL_DELAY_MS) must not be negative"},
		{"journal delay past its bound", map[string]string{"NARAD_STORAGE_JOURNAL_DELAY_MS": "11"}, "storage.journal_delay_ms (NARAD_STORAGE_JOURNAL_DELAY_MS) must be at most 10ms, got 11ms"},
		{"zero visibility", map[string]string{"NARAD_TOPIC_DEFAULT_VISIBILITY_TIMEOUT_MS": "0"}, "topic.default_visibility_timeout_ms (NARAD_TOPIC_DEFAULT_VISIBILITY_TIMEOUT_MS) must be greater than zero"},
		{"tiny segments", map[string]string{"NARAD_STORAGE_SEGMENT_BYTES": "100"}, "storage.segment_bytes (NARAD_STORAGE_SEGMENT_BYTES) must be between 1024 and 1073741824, got 100"},
		{"http addr", map[string]string{"NARAD_HTTP_ADDR": "nonsense"}, `http.addr (NARAD_HTTP_ADDR): "nonsense" is not host:port`},
		{"pprof addr", map[string]string{"NARAD_HTTP_PPROF_ADDR": "localhost:99999"}, "http.pprof_addr (NARAD_HTTP_PPROF_ADDR)"},
		{"advertise unspecified", map[string]string{"NARAD_CLUSTER_ADVERTISE": "0.0.0.0:7943"}, "unspecified address"},
		{"bad node id", map[string]string{"NARAD_NODE_ID": "a@b"}, `node_id (NARAD_NODE_ID): "a@b" is not a valid node id`},
		{"empty data dir", map[string]string{"NARAD_DATA_DIR": " "}, "data_dir (NARAD_DATA_DIR) must not be empty"},
		{"peer without id", map[string]string{"NARAD_CLUSTER_PEERS": "h1:7943"}, `environment NARAD_CLUSTER_PEERS: peer "h1:7943": want id@host:port`},
		{"initial member unknown", map[string]string{"NARAD_NODE_ID": "n1", "NARAD_CLUSTER_INITIAL_MEMBERS": "n1,ghost", "NARAD_SECURITY_ENABLED": "false"}, `"ghost" is neither this node ("n1") nor one of the peers`},
		{"unknown network", map[string]string{"NARAD_CLUSTER_NETWORK": "internet"}, `cluster.network (NARAD_CLUSTER_NETWORK) must be one of lan|wan, got "internet"`},
		{"tls half set", map[string]string{"NARAD_CLUSTER_TLS_CERT_FILE": "/etc/narad/node.pem"}, "go together"},
		{"peers without secret", map[string]string{"NARAD_NODE_ID": "n1", "NARAD_CLUSTER_PEERS": "n2@h2:7943"}, "NARAD_CLUSTER_SECRET is empty"},
		{"admin password too short", map[string]string{"NARAD_ADMIN_PASSWORD": "short"}, "NARAD_ADMIN_PASSWORD is 5 bytes; a password is 8..256 bytes"},
		{"admin password too long", map[string]string{"NARAD_ADMIN_PASSWORD": strings.Repeat("p", 257)}, "NARAD_ADMIN_PASSWORD is 257 bytes; a password is 8..256 bytes"},
		{"negative rate limit", map[string]string{"NARAD_LIMITS_PRODUCE_RECORDS_PER_S": "-1"}, "limits.produce_records_per_s (NARAD_LIMITS_PRODUCE_RECORDS_PER_S) must be between 0 and 10000000, got -1"},
		{"absurd byte limit", map[string]string{"NARAD_LIMITS_PRODUCE_BYTES_PER_S": "1099511627776"}, "limits.produce_bytes_per_s (NARAD_LIMITS_PRODUCE_BYTES_PER_S) must be between 0 and 10737418240"},
		{"consume limit not a number", map[string]string{"NARAD_LIMITS_CONSUME_REQUESTS_PER_S": "lots"}, `"lots" is not an integer`},
		{"joiner without a dialable address", map[string]string{"NARAD_NODE_ID": "n4", "NARAD_CLUSTER_PEERS": "n2@h2:7943",
			"NARAD_CLUSTER_SECRET": "s"}, `cluster.addr (NARAD_CLUSTER_ADDR) = ":7943" binds every interface, and this node ("n4") is not in cluster.peers (NARAD_CLUSTER_PEERS): set cluster.advertise (NARAD_CLUSTER_ADVERTISE)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(LoadArgs{LookupEnv: env(tt.env)})
			if err == nil {
				t.Fatalf("want error containing %q, got nil", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	c := Default()
	c.Security.AdminPassword = "long-enough"
	c.Log.Level = "loud"
	c.Storage.Codec = "lz4"
	c.HTTP.WriteTimeout = time.Second
	err := c.Validate()
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want *ValidationError, got %T %v", err, err)
	}
	if len(ve.Problems) != 3 {
		t.Fatalf("want 3 problems, got %d: %q", len(ve.Problems), ve.Problems)
	}
	if good := Default(); good.Security.AdminPassword == "" {
		good.Security.AdminPassword = "long-enough"
		if err := good.Validate(); err != nil {
			t.Fatalf("defaults plus a password must validate: %v", err)
		}
	}
}

// Every length a password may have is a good NARAD_ADMIN_PASSWORD, the
// bounds included; security off needs none, so any value passes then.
func TestAdminPasswordBounds(t *testing.T) {
	for _, n := range []int{8, 72, 73, 256} {
		if _, err := Load(LoadArgs{LookupEnv: env(map[string]string{"NARAD_ADMIN_PASSWORD": strings.Repeat("p", n)})}); err != nil {
			t.Errorf("a %d-byte admin password: %v", n, err)
		}
	}
	if _, err := Load(LoadArgs{LookupEnv: env(map[string]string{"NARAD_SECURITY_ENABLED": "false", "NARAD_ADMIN_PASSWORD": "x"})}); err != nil {
		t.Errorf("security off with a short admin password: %v", err)
	}
}

func eq[T any](t *testing.T, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v, want %#v", got, want)
	}
}
