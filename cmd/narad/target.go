package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"

	"github.com/narad-io/narad/client"
)

const defaultServer = "http://127.0.0.1:7942"

// target is the broker a client command talks to and who it is.
type target struct {
	server, user, password string
}

// resolveTarget picks each of server, user and password independently:
// flag, then environment, then the saved context (--context, else the
// selected one; see contexts.go), then default. The contexts file is read
// only when flags and environment leave a field open or --context is
// given, so a broken file cannot get in the way of a fully explicit call.
func (a *app) resolveTarget() (target, error) {
	t := target{
		server:   first(a.server, a.env("NARAD_ADDR")),
		user:     first(a.user, a.env("NARAD_USER")),
		password: first(a.password, a.env("NARAD_PASS")),
	}
	if a.contextName != "" || t.server == "" || t.user == "" || t.password == "" {
		saved, err := a.activeContext()
		if err != nil {
			return target{}, err
		}
		t.server = first(t.server, saved.Server)
		t.user = first(t.user, saved.User)
		t.password = first(t.password, saved.Password)
	}
	if t.server == "" {
		t.server = defaultServer
	}
	if t.user == "" && t.password != "" {
		// The broker's only built-in account is the admin; a password on
		// its own means that one.
		t.user = "admin"
	}
	return t, nil
}

// client builds the API client for the resolved target.
func (a *app) client() (*client.Client, error) {
	t, err := a.resolveTarget()
	if err != nil {
		return nil, err
	}
	return a.clientFor(t)
}

// clientFor builds the API client for t, for a command that also needs the
// resolved fields themselves. With --ca-file (NARAD_CA_FILE) it verifies an
// https:// broker against that CA instead of the system's roots.
func (a *app) clientFor(t target) (*client.Client, error) {
	var hc *http.Client
	if ca := first(a.caFile, a.env("NARAD_CA_FILE")); ca != "" {
		var err error
		if hc, err = trusting(ca); err != nil {
			return nil, err
		}
	}
	return client.New(t.server, t.user, t.password, hc), nil
}

func (a *app) env(name string) string {
	if a.lookupEnv == nil {
		return ""
	}
	v, _ := a.lookupEnv(name)
	return v
}

func first(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// trusting is an HTTP client that verifies servers against the CA in
// file (a broker serving HTTPS with a private CA's certificate).
func trusting(file string) (*http.Client, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--ca-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--ca-file %s: no PEM certificate in it", file)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: t}, nil
}
