package server

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// The settings that choose each listener's address, in the words an
// operator types: a start that cannot bind one names the one to change.
const (
	httpAddrSetting    = "--http-addr (NARAD_HTTP_ADDR)"
	clusterAddrSetting = "--cluster-addr (NARAD_CLUSTER_ADDR)"
)

// listenHTTP binds the client API's address. Run calls it before the
// metastore opens: a taken port is the most common start-up conflict, and
// finding it first leaves nothing half-initialised behind. Until the API
// serves, the kernel queues connections instead of refusing them.
func listenHTTP(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, addrErr("the client API", addr, httpAddrSetting, err)
	}
	return ln, nil
}

// addrErr explains a listener that could not bind: a taken port names the
// setting to change; any other failure keeps its own words.
func addrErr(what, addr, setting string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s cannot listen on %s: the address is in use by another process (another narad node?): "+
			"stop that process, or set %s to a free address", what, addr, setting)
	}
	return fmt.Errorf("%s cannot listen on %s (%s): %w", what, addr, setting, err)
}
