package config

import (
	"net"
	"path/filepath"
)

// ApplyDev turns cfg into the single-machine developer preset: loopback only
// (so turning authentication off exposes nothing), data under the user's
// home so it survives across working directories, and readable text logs.
func ApplyDev(cfg *Config, home string) {
	cfg.Dev = true
	cfg.HTTP.Addr = "127.0.0.1:7942"
	cfg.Cluster.Addr = "127.0.0.1:7943"
	cfg.Security.Enabled = false
	cfg.DataDir = filepath.Join(home, ".narad", "data")
	cfg.Log.Format = "text"
}

// checkDevLoopback refuses the developer preset with authentication off on
// any address but loopback. The preset turns authentication off because it
// listens on loopback only; an address given on top of it (a flag, the
// environment, a file) would otherwise serve every route, unauthenticated,
// to the network.
func (c Config) checkDevLoopback(v *validator) {
	if !c.Dev || c.Security.Enabled {
		return
	}
	for _, a := range []struct{ key, addr string }{
		{"http.addr", c.HTTP.Addr}, {"cluster.addr", c.Cluster.Addr}, {"http.pprof_addr", c.HTTP.PprofAddr},
	} {
		if a.addr == "" || isLoopback(a.addr) {
			continue
		}
		v.addf("%s = %q with --dev: developer mode turns authentication off, so it listens on loopback only "+
			"(127.0.0.1, ::1 or localhost); drop --dev to serve the network with authentication on", byEnv(a.key), a.addr)
	}
}

// isLoopback reports whether a listen address's host is a loopback one;
// an empty host (every interface) is not.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return true // not host:port at all: checkListenAddr says so
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
