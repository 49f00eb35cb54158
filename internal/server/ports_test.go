package server

import (
	"net"
	"strings"
	"testing"
)

// A taken client API port says which setting to change; other listen
// failures keep their own words and name the setting too.
func TestListenHTTPNamesTheSetting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = listenHTTP(ln.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "in use by another process") || !strings.Contains(err.Error(), httpAddrSetting) {
		t.Fatalf("taken port: %v", err)
	}
	_, err = listenHTTP("127.0.0.1:notaport")
	if err == nil || !strings.Contains(err.Error(), httpAddrSetting) || strings.Contains(err.Error(), "in use") {
		t.Fatalf("bad address: %v", err)
	}
}
