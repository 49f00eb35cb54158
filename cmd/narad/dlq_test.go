package main

import (
	"strings"
	"testing"
)

func TestTopicAddAndEditDeadLetterPolicy(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		if r.Method == "POST" {
			return 201, `{"name":"orders","partitions":3,"retention_ms":0,"visibility_timeout_ms":30000,"max_deliveries":5,"dead_letter_topic":"orders.dlq"}`
		}
		return 200, `{"name":"orders","partitions":3,"retention_ms":0,"visibility_timeout_ms":30000,"max_deliveries":0}`
	})
	r := against(b).run(t, "topic", "add", "orders", "--max-deliveries", "5", "--dead-letter-topic", "orders.dlq")
	mustOK(t, r)
	if !strings.Contains(r.stdout, "dead letters to orders.dlq after 5 deliveries") {
		t.Errorf("stdout %q", r.stdout)
	}
	mustOK(t, against(b).run(t, "topic", "edit", "orders", "--max-deliveries", "0", "--dead-letter-topic", ""))
	got := b.requests()
	if len(got) != 2 || got[0].Body != `{"name":"orders","max_deliveries":5,"dead_letter_topic":"orders.dlq"}` ||
		got[1].Body != `{"max_deliveries":0,"dead_letter_topic":""}` {
		t.Fatalf("requests %+v", got)
	}
}

func TestTopicMaxDeliveriesCheckedBeforeSending(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 201, `{}` })
	for _, args := range [][]string{
		{"topic", "add", "t", "--max-deliveries", "1001", "--dead-letter-topic", "d"},
		{"topic", "edit", "t", "--max-deliveries", "-1"},
	} {
		r := against(b).run(t, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "--max-deliveries") {
			t.Errorf("%v: exit %d stderr %q", args, r.code, r.stderr)
		}
	}
	if n := len(b.requests()); n != 0 {
		t.Errorf("%d requests sent for invalid input", n)
	}
}

func TestTopicDeadLetterRefusalNamesTheFlag(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		return 400, `{"error":"max_deliveries 3 needs dead_letter_topic: the topic a record goes to once its deliveries are used up"}`
	})
	r := against(b).run(t, "topic", "add", "t", "--max-deliveries", "3")
	if r.code == 0 || !strings.Contains(r.stderr, "--max-deliveries 3: ") {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
}

func TestDLQRedrive(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 200, `{"moved":12}` })
	r := against(b).run(t, "dlq", "redrive", "orders.dlq", "--to", "orders", "--max", "50")
	mustOK(t, r)
	if r.stdout != "moved 12 records from orders.dlq to orders\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	r = against(b).run(t, "dlq", "redrive", "orders.dlq", "--to", "orders", "-o", "json")
	mustOK(t, r)
	if compact := strings.Join(strings.Fields(r.stdout), ""); compact != `{"moved":12}` {
		t.Errorf("json stdout %q", r.stdout)
	}
	got := b.requests()
	if len(got) != 2 || got[0].Method != "POST" || got[0].Path != "/v1/topics/orders.dlq/redrive" ||
		got[0].Body != `{"to":"orders","max":50}` || got[1].Body != `{"to":"orders"}` {
		t.Fatalf("requests %+v", got)
	}
	for _, args := range [][]string{
		{"dlq", "redrive", "orders.dlq"},
		{"dlq", "redrive", "orders.dlq", "--to", "orders", "--max", "0"},
		{"dlq", "redrive", "orders.dlq", "--to", "orders", "--max", "100001"},
	} {
		if r := against(b).run(t, args...); r.code != 1 {
			t.Errorf("%v: exit %d stderr %q", args, r.code, r.stderr)
		}
	}
	if n := len(b.requests()); n != 2 {
		t.Errorf("%d requests; refused flags sent some", n)
	}
}
