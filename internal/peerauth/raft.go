package peerauth

import (
	"context"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// RaftLayer is the peer handshake (listener and dialer) as
// hashicorp/raft's stream layer.
type RaftLayer struct {
	*Listener
	dialer    *Dialer
	advertise net.Addr
}

var _ raft.StreamLayer = (*RaftLayer)(nil)

// ListenRaft binds Raft's port; advertise (may be nil) is the address
// peers dial.
func ListenRaft(bind string, advertise net.Addr, cfg Config) (*RaftLayer, error) {
	d, err := NewDialer(cfg)
	if err != nil {
		return nil, err
	}
	l, err := Listen(bind, cfg)
	if err != nil {
		return nil, err
	}
	return &RaftLayer{Listener: l, dialer: d, advertise: advertise}, nil
}

// Dial connects to a peer's Raft port.
func (r *RaftLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return r.dialer.DialContext(ctx, string(addr))
}

// Addr is the advertised address when set, else the bound one.
func (r *RaftLayer) Addr() net.Addr {
	if r.advertise != nil {
		return r.advertise
	}
	return r.Listener.Addr()
}
