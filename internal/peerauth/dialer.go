package peerauth

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/narad-io/narad/internal/netfault"
)

// Dialer connects to peers' cluster ports and authenticates both ways.
type Dialer struct {
	cfg Config
	key []byte
}

// NewDialer returns a dialer for cfg's plane and secret.
func NewDialer(cfg Config) (*Dialer, error) {
	cfg, key, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Dialer{cfg: cfg, key: key}, nil
}

// DialContext dials addr and runs the handshake, within ctx and at most
// the handshake timeout for the handshake itself.
func (d *Dialer) DialContext(ctx context.Context, addr string) (net.Conn, error) {
	var nd net.Dialer
	raw, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	// Fault tests' binaries delay, lose or cut peer traffic here, handshake
	// included; in every other build this is raw itself.
	raw = netfault.Wrap(raw, addr)
	deadline := time.Now().Add(d.cfg.HandshakeTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	conn, err := d.handshake(ctx, raw, addr, deadline)
	if err != nil {
		raw.Close()
		return nil, err
	}
	return conn, nil
}

func (d *Dialer) handshake(ctx context.Context, raw net.Conn, addr string, deadline time.Time) (net.Conn, error) {
	if err := raw.SetDeadline(deadline); err != nil {
		return nil, err
	}
	conn := raw
	if d.cfg.TLSClient != nil {
		cfg := d.cfg.TLSClient.Clone()
		if cfg.ServerName == "" {
			if host, _, err := net.SplitHostPort(addr); err == nil {
				cfg.ServerName = host
			}
		}
		tc := tls.Client(raw, cfg)
		hctx, cancel := context.WithDeadline(ctx, deadline)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("peerauth: TLS to %s: %w", addr, err)
		}
		conn = tc
	}
	if err := dialerSide(conn, d.key); err != nil {
		return nil, fmt.Errorf("peerauth: %s peer %s did not prove it belongs to the cluster (check NARAD_CLUSTER_SECRET on both nodes): %w",
			d.cfg.Plane, addr, err)
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		return nil, err
	}
	return conn, nil
}
