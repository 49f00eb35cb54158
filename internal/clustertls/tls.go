package clustertls

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/hashicorp/raft"
)

// Config is one node's side of mutual TLS: what it serves with and what it
// dials with.
type Config struct {
	Server, Client *tls.Config
}

// Load reads the node's certificate and key and the cluster CA (PEM).
func Load(certFile, keyFile, caFile string) (*Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("cluster TLS certificate: %w", err)
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("cluster TLS CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("cluster TLS CA: no certificate in " + caFile)
	}
	return &Config{
		Server: &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pool,
			ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12},
		Client: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12},
	}, nil
}

// StreamLayer is Raft's transport over mutual TLS.
type StreamLayer struct {
	net.Listener
	advertise net.Addr
	client    *tls.Config
}

// Listen opens Raft's TLS listener on bind; advertise (may be nil) is the
// address peers dial.
func (c *Config) Listen(bind string, advertise net.Addr) (*StreamLayer, error) {
	ln, err := tls.Listen("tcp", bind, c.Server)
	if err != nil {
		return nil, err
	}
	return &StreamLayer{Listener: ln, advertise: advertise, client: c.Client}, nil
}

// Dial connects to a peer's Raft port, verifying its certificate.
func (s *StreamLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", string(addr), s.client)
}

// Addr is the advertised address when set, else the listener's.
func (s *StreamLayer) Addr() net.Addr {
	if s.advertise != nil {
		return s.advertise
	}
	return s.Listener.Addr()
}
