package server

import (
	"log/slog"
	"net"
	"strconv"

	"github.com/narad-io/narad/internal/config"
	"github.com/narad-io/narad/internal/meta"
)

// advertise derives the Raft address peers dial: the configured one; else
// this node's own entry in cluster.peers (the address the others were told
// to dial, and the one a bootstrap records); else, binding every interface,
// loopback with the cluster port (a node with no peers: nobody else dials
// it); else "" (the bind address is dialable as it is).
func advertise(nodeID string, c config.ClusterConfig) string {
	if c.Advertise != "" {
		return c.Advertise
	}
	for _, p := range c.Peers {
		if p.ID == nodeID {
			return p.Addr
		}
	}
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil || (host != "" && host != "0.0.0.0" && host != "::") {
		return ""
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// raftBind is where Raft listens: cluster.addr, except that a node with no
// peers binds loopback when cluster.addr names every interface (the
// default), since nobody else has a reason to dial it. Its port still
// authenticates (package peerauth).
func raftBind(c config.ClusterConfig, clustered bool, log *slog.Logger) string {
	host, port, err := net.SplitHostPort(c.Addr)
	if clustered || err != nil || (host != "" && host != "0.0.0.0" && host != "::") {
		return c.Addr
	}
	bind := net.JoinHostPort("127.0.0.1", port)
	log.Info("no cluster peers configured: the Raft port listens on loopback only", "addr", bind)
	return bind
}

// rpcAddrOf is a cluster address with its port plus one: node RPC listens
// beside Raft (docs/operations.md, "Ports and files"), so peers never need to
// be told it.
func rpcAddrOf(raftAddr string) (string, error) {
	host, port, err := net.SplitHostPort(raftAddr)
	if err != nil {
		return "", err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(host, strconv.Itoa(p+1)), nil
}

// httpAdvertise is the client API address recorded in this node's member
// record: the bind address when it names a host, else the advertised
// cluster host with the HTTP port (":7942" or "0.0.0.0:7942" is not an
// address anyone can dial).
func httpAdvertise(httpAddr, raftAdvertise string) string {
	host, port, err := net.SplitHostPort(httpAddr)
	if err != nil {
		return httpAddr
	}
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		return httpAddr
	}
	rhost, _, err := net.SplitHostPort(raftAdvertise)
	if err != nil || rhost == "" {
		return httpAddr
	}
	return net.JoinHostPort(rhost, port)
}

// initialServers maps cluster.initial_members to Raft addresses: the
// node's own advertised address, the others' from cluster.peers.
func initialServers(cfg config.Config, self string) []meta.Server {
	var out []meta.Server
	for _, id := range cfg.Cluster.InitialMembers {
		if id == cfg.NodeID {
			out = append(out, meta.Server{ID: id, Addr: self})
			continue
		}
		for _, p := range cfg.Cluster.Peers {
			if p.ID == id {
				out = append(out, meta.Server{ID: id, Addr: p.Addr})
			}
		}
	}
	return out
}

// peerRPCAddrs are the node-RPC addresses of the other configured peers,
// which a joining node walks.
func peerRPCAddrs(cfg config.Config) []string {
	var out []string
	for _, p := range cfg.Cluster.Peers {
		if p.ID == cfg.NodeID {
			continue
		}
		if a, err := rpcAddrOf(p.Addr); err == nil {
			out = append(out, a)
		}
	}
	return out
}
