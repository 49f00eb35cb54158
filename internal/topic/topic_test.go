package topic

import (
	"testing"

	"github.com/narad-io/narad/internal/meta"
)

// KeyPartition is FNV-1a 32 of the key modulo the count: the values are
// the reference's, so produce and fan-out place a key where it always went.
func TestKeyPartitionIsFNV1a(t *testing.T) {
	for _, tc := range []struct {
		key  string
		n    int
		want int
	}{
		{"", 7, int(uint32(2166136261) % 7)}, // the FNV offset basis
		{"a", 1 << 30, int(uint32(0xe40c292c) % (1 << 30))},
		{"orders-17", 1, 0},
	} {
		if got := KeyPartition([]byte(tc.key), tc.n); got != tc.want {
			t.Errorf("KeyPartition(%q, %d) = %d, want %d", tc.key, tc.n, got, tc.want)
		}
	}
}

func TestValidateName(t *testing.T) {
	long := make([]byte, MaxNameLen+1)
	for i := range long {
		long[i] = 'a'
	}
	for name, ok := range map[string]bool{
		"orders": true, "a.b_c-9": true, string(long[:MaxNameLen]): true,
		"": false, ".": false, "..": false, "a/b": false, "a b": false, string(long): false,
	} {
		if err := ValidateName(name); (err == nil) != ok {
			t.Errorf("ValidateName(%q) = %v, want ok %v", name, err, ok)
		}
	}
}

// The view names the role and never shows a remote child's credentials.
func TestViewOf(t *testing.T) {
	remote := meta.Topic{Name: "dr", Parent: "orders", Remote: &meta.RemoteTarget{URL: "http://x", Topic: "m", Username: "u", Password: "p"}}
	v := ViewOf(remote)
	if v.Role != "child" || v.Remote.Username != "" || v.Remote.Password != "" || v.Remote.URL != "http://x" {
		t.Fatalf("view of a remote child: %+v %+v", v, v.Remote)
	}
	if remote.Remote.Password != "p" {
		t.Fatal("ViewOf changed the record it was given")
	}
	if ViewOf(meta.Topic{Name: "orders", Children: []string{"dr"}}).Role != "parent" || ViewOf(meta.Topic{Name: "x"}).Role != "standalone" {
		t.Fatal("roles of a parent and a standalone topic")
	}
}
