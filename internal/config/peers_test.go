package config

import (
	"strings"
	"testing"
)

func TestParsePeers(t *testing.T) {
	tests := []struct {
		in      string
		want    []Peer
		wantErr string
	}{
		{in: "", want: nil},
		{in: " , ", want: nil},
		{in: "n1@10.0.0.1:7943", want: []Peer{{"n1", "10.0.0.1:7943"}}},
		{in: "n1@a.example:7943, n2@b.example:7943,", want: []Peer{{"n1", "a.example:7943"}, {"n2", "b.example:7943"}}},
		{in: "n1@[::1]:7943", want: []Peer{{"n1", "[::1]:7943"}}},
		{in: "n1", wantErr: "want id@host:port"},
		{in: "@h:1", wantErr: "not a valid node id"},
		{in: "n1@h", wantErr: "is not host:port"},
		{in: "n1@:7943", wantErr: "has no host"},
		{in: "n1@h:0", wantErr: "port must be a number from 1 to 65535"},
		{in: "n1@h:http", wantErr: "port must be a number"},
		{in: "n1@h:1,n1@g:1", wantErr: `peer id "n1" appears twice`},
		{in: "n1@h:1,n2@h:1", wantErr: `peer address "h:1" appears twice`},
		{in: "n 1@h:1", wantErr: "not a valid node id"},
	}
	for _, tt := range tests {
		got, err := ParsePeers(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParsePeers(%q) error = %v, want it to contain %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParsePeers(%q): %v", tt.in, err)
			continue
		}
		eq(t, got, tt.want)
		if len(got) > 0 {
			again, err := ParsePeers(FormatPeers(got))
			if err != nil {
				t.Errorf("FormatPeers round trip of %q: %v", tt.in, err)
			}
			eq(t, again, got)
		}
	}
}
