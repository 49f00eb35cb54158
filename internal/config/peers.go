package config

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
)

// Peer is one other cluster node: its id and the address to dial it on.
type Peer struct {
	ID   string
	Addr string // host:port
}

func (p Peer) String() string { return p.ID + "@" + p.Addr }

// nodeIDPattern keeps ids safe inside "id@host:port,…" lists, file names and
// log lines.
var nodeIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func checkNodeID(id string) error {
	if !nodeIDPattern.MatchString(id) {
		return fmt.Errorf("%q is not a valid node id (letters, digits, '.', '_', '-'; at most 128; starting with a letter or digit)", id)
	}
	return nil
}

// ParsePeers parses "id@host:port,id@host:port". Empty text is no peers.
// Ids and addresses must be unique.
func ParsePeers(text string) ([]Peer, error) {
	var peers []Peer
	ids := map[string]bool{}
	addrs := map[string]bool{}
	for _, item := range splitList(text) {
		id, addr, ok := strings.Cut(item, "@")
		if !ok {
			return nil, fmt.Errorf("peer %q: want id@host:port", item)
		}
		if err := checkNodeID(id); err != nil {
			return nil, fmt.Errorf("peer %q: %v", item, err)
		}
		if err := checkDialAddr(addr); err != nil {
			return nil, fmt.Errorf("peer %q: %v", item, err)
		}
		if ids[id] {
			return nil, fmt.Errorf("peer id %q appears twice", id)
		}
		if addrs[addr] {
			return nil, fmt.Errorf("peer address %q appears twice", addr)
		}
		ids[id], addrs[addr] = true, true
		peers = append(peers, Peer{ID: id, Addr: addr})
	}
	return peers, nil
}

// FormatPeers is the inverse of ParsePeers.
func FormatPeers(peers []Peer) string {
	parts := make([]string, len(peers))
	for i, p := range peers {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}

// checkListenAddr accepts anything net.Listen would: host may be empty and
// port 0 asks for any free port (tests rely on that).
func checkListenAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q: port must be a number from 0 to 65535", addr)
	}
	return nil
}

// checkDialAddr is stricter: someone has to reach it, so it needs a host and
// a real port.
func checkDialAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port", addr)
	}
	if host == "" {
		return fmt.Errorf("%q has no host", addr)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return fmt.Errorf("%q is the unspecified address; nobody can dial it", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: port must be a number from 1 to 65535", addr)
	}
	return nil
}
