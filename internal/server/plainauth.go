package server

import (
	"log/slog"
	"net"
)

// basicAuthInClear reports whether the client API takes Basic credentials
// where a network can read them: security on, no TLS, and a bound address
// that is not loopback (every interface, a concrete non-loopback address,
// or a name other than localhost, which could resolve anywhere).
func basicAuthInClear(security, tls bool, addr string) bool {
	if !security || tls {
		return false
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// warnBasicAuthInClear says so once, at start, naming what fixes it. An
// ingress that terminates TLS in front of the node is a fix too (the
// reference deployment), so it is a warning, not a refusal.
func warnBasicAuthInClear(security, tls bool, addr string, log *slog.Logger) {
	if basicAuthInClear(security, tls, addr) {
		log.Warn("the client API takes HTTP Basic passwords over plain HTTP on a non-loopback address: anyone on the network path "+
			"can read them; set NARAD_HTTP_TLS_CERT_FILE and NARAD_HTTP_TLS_KEY_FILE, or keep it behind an ingress that terminates TLS",
			"addr", addr)
	}
}
