package main

import (
	"testing"
)

// reportBroker lists three topics over two pages, out of order, and has
// "gone" deleted between the listing and its read.
func reportBroker(t *testing.T) *broker {
	return newBroker(t, func(r req) (int, string) {
		switch r.Path {
		case "/v1/topics":
			if r.q("page_token") == "" {
				return 200, `{"topics":[{"name":"orders"},{"name":"gone"}],"next_page_token":"p2"}`
			}
			return 200, `{"topics":[{"name":"audit"}],"next_page_token":""}`
		case "/v1/topics/orders":
			return 200, `{"name":"orders","partitions":3,"role":"parent","partition_stats":[
				{"index":0,"owner_node":"n2","oldest_offset":10,"high_watermark":110,"size_bytes":1048576},
				{"index":1,"owner_node":"n1","oldest_offset":0,"high_watermark":50,"size_bytes":524288},
				{"index":2,"owner_node":"n2","oldest_offset":7,"high_watermark":5,"size_bytes":0}]}`
		case "/v1/topics/audit":
			return 200, `{"name":"audit","partitions":1,"partition_stats":[{"index":0,"high_watermark":3,"size_bytes":100}]}`
		}
		return 404, `{"error":"topic not found"}`
	})
}

func TestServerReport(t *testing.T) {
	b := reportBroker(t)
	r := against(b).run(t, "server", "report")
	mustOK(t, r)
	expectRequests(t, b,
		req{Method: "GET", Path: "/v1/topics"},
		req{Method: "GET", Path: "/v1/topics"},
		req{Method: "GET", Path: "/v1/topics/audit"},
		req{Method: "GET", Path: "/v1/topics/gone"},
		req{Method: "GET", Path: "/v1/topics/orders"},
	)
	if got := b.requests(); got[0].q("limit") != "100" || got[1].q("page_token") != "p2" {
		t.Errorf("pagination: %+v", got[:2])
	}
	want := "NAME    PARTITIONS  MESSAGES  SIZE     OWNERS     ROLE\n" +
		"audit   1           3         100 B    ?:1        -\n" +
		"orders  3           150       1.5 MiB  n1:1 n2:2  parent\n"
	if r.stdout != want {
		t.Errorf("stdout\n%s\nwant\n%s", r.stdout, want)
	}
}

func TestServerReportJSON(t *testing.T) {
	r := against(reportBroker(t)).run(t, "server", "report", "--json")
	mustOK(t, r)
	want := `[
  {
    "name": "audit",
    "partitions": 1,
    "messages": 3,
    "size_bytes": 100,
    "owners": {
      "?": 1
    }
  },
  {
    "name": "orders",
    "partitions": 3,
    "messages": 150,
    "size_bytes": 1572864,
    "owners": {
      "n1": 1,
      "n2": 2
    },
    "role": "parent"
  }
]
`
	if r.stdout != want {
		t.Errorf("stdout\n%s\nwant\n%s", r.stdout, want)
	}
}

func TestServerReportStopsOnOtherErrors(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		if r.Path == "/v1/topics" {
			return 200, `{"topics":[{"name":"a"},{"name":"b"}]}`
		}
		return 403, `{"error":"forbidden"}`
	})
	r := against(b).run(t, "server", "report")
	if r.code != exitAuth || r.stderr != "narad: topic a: forbidden (HTTP 403)\n" || r.stdout != "" {
		t.Errorf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if n := len(b.requests()); n != 2 {
		t.Errorf("%d requests, want 2 (list, then the failing read)", n)
	}
}

func TestServerReportNoTopics(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 200, `{"topics":[]}` })
	r := against(b).run(t, "server", "report")
	mustOK(t, r)
	if r.stdout != "NAME  PARTITIONS  MESSAGES  SIZE  OWNERS  ROLE\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	r = against(b).run(t, "server", "report", "--json")
	mustOK(t, r)
	if r.stdout != "[]\n" {
		t.Errorf("json %q", r.stdout)
	}
}
