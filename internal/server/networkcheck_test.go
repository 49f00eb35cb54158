package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/rpc"
)

func TestNetworkCheckWarnsOfAMismatchOncePerMinute(t *testing.T) {
	var logs bytes.Buffer
	c := newNetworkCheck("wan", slog.New(slog.NewTextHandler(&logs, nil)))
	at := time.Unix(1000, 0)
	if c.note(rpc.Member{ID: "n2", Network: "wan"}, at) || logs.Len() != 0 {
		t.Fatalf("same network noted as a mismatch: %s", logs.String())
	}
	if !c.note(rpc.Member{ID: "n3"}, at) {
		t.Fatal("a node before the setting (lan) not noted on a wan node")
	}
	if !strings.Contains(logs.String(), "member=n3") || !strings.Contains(logs.String(), "its_network=lan") {
		t.Fatalf("warning: %s", logs.String())
	}
	before := logs.Len()
	c.note(rpc.Member{ID: "n3"}, at.Add(30*time.Second))
	if logs.Len() != before {
		t.Fatalf("warned again within a minute: %s", logs.String())
	}
	c.note(rpc.Member{ID: "n3"}, at.Add(61*time.Second))
	if logs.Len() == before {
		t.Fatal("not warned again after a minute")
	}
	if lan := newNetworkCheck("", slog.New(slog.DiscardHandler)); lan.note(rpc.Member{ID: "old"}, at) {
		t.Fatal("an empty network differs from an empty one")
	}
}
