//go:build !narad_netfault

package netfault

import "net"

// Wrap returns conn: faults exist only in a build with the narad_netfault
// tag (faulty.go).
func Wrap(conn net.Conn, addr string) net.Conn { return conn }
