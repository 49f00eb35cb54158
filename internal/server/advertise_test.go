package server

import (
	"testing"

	"github.com/narad-io/narad/internal/config"
)

func TestAdvertisedAddresses(t *testing.T) {
	for _, tc := range []struct {
		httpAddr, raft, want string
	}{
		{"10.0.0.5:7942", "10.0.0.5:7943", "10.0.0.5:7942"},
		{":7942", "n1.svc:7943", "n1.svc:7942"},
		{"0.0.0.0:8042", "10.0.0.7:8043", "10.0.0.7:8042"},
		{"[::]:7942", "[fd00::1]:7943", "[fd00::1]:7942"},
		{"localhost:7942", "10.0.0.5:7943", "localhost:7942"},
		{":7942", "", ":7942"}, // nothing better known
	} {
		if got := httpAdvertise(tc.httpAddr, tc.raft); got != tc.want {
			t.Errorf("httpAdvertise(%q, %q) = %q, want %q", tc.httpAddr, tc.raft, got, tc.want)
		}
	}
	if got, err := rpcAddrOf("n1.svc:7943"); err != nil || got != "n1.svc:7944" {
		t.Errorf("rpcAddrOf = %q, %v", got, err)
	}
	if _, err := rpcAddrOf("n1.svc"); err == nil {
		t.Error("rpcAddrOf accepted an address without a port")
	}
	peers := []config.Peer{{ID: "n1", Addr: "n1.svc:7943"}, {ID: "n2", Addr: "n2.svc:7943"}}
	for _, tc := range []struct {
		c    config.ClusterConfig
		want string
	}{
		{config.ClusterConfig{Advertise: "x.svc:7943", Addr: ":7943", Peers: peers}, "x.svc:7943"},
		{config.ClusterConfig{Addr: ":7943", Peers: peers}, "n1.svc:7943"}, // own peers entry
		{config.ClusterConfig{Addr: ":7943", Peers: peers[1:]}, "127.0.0.1:7943"},
		{config.ClusterConfig{Addr: ":7943"}, "127.0.0.1:7943"},
		{config.ClusterConfig{Addr: "0.0.0.0:7943"}, "127.0.0.1:7943"},
		{config.ClusterConfig{Addr: "10.0.0.5:7943"}, ""}, // the bind address itself is dialable
	} {
		if got := advertise("n1", tc.c); got != tc.want {
			t.Errorf("advertise(%+v) = %q, want %q", tc.c, got, tc.want)
		}
	}
}
